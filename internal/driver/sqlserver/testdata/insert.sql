-- one row
INSERT INTO [dbo].[usertable] ([YCSB_KEY], [FIELD0], [FIELD1], [FIELD2]) VALUES (@p1, @p2, @p3, @p4)

-- one row, declarations
@p1 VARBINARY(255), @p2 VARBINARY(100), @p3 VARBINARY(100), @p4 VARBINARY(100)

-- two rows
INSERT INTO [dbo].[usertable] ([YCSB_KEY], [FIELD0], [FIELD1], [FIELD2]) VALUES (@p1, @p2, @p3, @p4), (@p5, @p6, @p7, @p8)

-- two rows, declarations
@p1 VARBINARY(255), @p2 VARBINARY(100), @p3 VARBINARY(100), @p4 VARBINARY(100), @p5 VARBINARY(255), @p6 VARBINARY(100), @p7 VARBINARY(100), @p8 VARBINARY(100)

-- delayed transaction, one row
SET NOCOUNT ON; SET XACT_ABORT ON; DECLARE @rows int; BEGIN TRANSACTION; INSERT INTO [dbo].[usertable] ([YCSB_KEY], [FIELD0], [FIELD1], [FIELD2]) VALUES (@p1, @p2, @p3, @p4); SET @rows = @@ROWCOUNT; COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON); SELECT @rows

-- procedure call
[dbo].[dbprobe_usertable_insert]

-- delayed transaction, procedure call
SET NOCOUNT ON; SET XACT_ABORT ON; DECLARE @rows int; BEGIN TRANSACTION; EXEC @rows = [dbo].[dbprobe_usertable_insert] @p1, @p2, @p3, @p4; COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON); SELECT @rows

-- delayed transaction, procedure call, declarations
@p1 VARBINARY(255), @p2 VARBINARY(100), @p3 VARBINARY(100), @p4 VARBINARY(100)

-- bulk copy
INSERTBULK {"TableName":"[dbo].[usertable]","ColumnsName":["YCSB_KEY","FIELD0","FIELD1","FIELD2"],"Options":{"CheckConstraints":false,"FireTriggers":false,"KeepNulls":false,"KilobytesPerBatch":0,"RowsPerBatch":0,"Order":null,"Tablock":false}}

-- batch transaction begin
BEGIN TRANSACTION

-- batch transaction commit
COMMIT TRANSACTION

-- batch transaction commit, delayed
COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON)

-- batch transaction rollback
IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION


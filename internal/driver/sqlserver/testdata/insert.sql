-- one row
INSERT INTO [dbo].[usertable] ([YCSB_KEY], [FIELD0], [FIELD1], [FIELD2]) VALUES (@p1, @p2, @p3, @p4)

-- two rows
INSERT INTO [dbo].[usertable] ([YCSB_KEY], [FIELD0], [FIELD1], [FIELD2]) VALUES (@p1, @p2, @p3, @p4), (@p5, @p6, @p7, @p8)

-- delayed transaction, one row
SET NOCOUNT ON; SET XACT_ABORT ON; DECLARE @rows int; BEGIN TRANSACTION; INSERT INTO [dbo].[usertable] ([YCSB_KEY], [FIELD0], [FIELD1], [FIELD2]) VALUES (@p1, @p2, @p3, @p4); SET @rows = @@ROWCOUNT; COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON); SELECT @rows

-- procedure call
[dbo].[dbprobe_usertable_insert]

-- delayed transaction, procedure call
SET NOCOUNT ON; SET XACT_ABORT ON; DECLARE @rows int; BEGIN TRANSACTION; EXEC @rows = [dbo].[dbprobe_usertable_insert] @p1, @p2, @p3, @p4; COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON); SELECT @rows

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


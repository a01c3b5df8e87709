-- all fields
UPDATE [dbo].[usertable] SET [FIELD0] = @p1, [FIELD1] = @p2, [FIELD2] = @p3 WHERE [YCSB_KEY] = @p4

-- all fields, declarations
@p1 VARBINARY(100), @p2 VARBINARY(100), @p3 VARBINARY(100), @p4 VARBINARY(255)

-- field 1
UPDATE [dbo].[usertable] SET [FIELD1] = @p1 WHERE [YCSB_KEY] = @p2

-- field 1, declarations
@p1 VARBINARY(100), @p2 VARBINARY(255)

-- fields 2, 0
UPDATE [dbo].[usertable] SET [FIELD2] = @p1, [FIELD0] = @p2 WHERE [YCSB_KEY] = @p3

-- fields 2, 0, declarations
@p1 VARBINARY(100), @p2 VARBINARY(100), @p3 VARBINARY(255)

-- delayed transaction, field 1
SET NOCOUNT ON; SET XACT_ABORT ON; DECLARE @rows int; BEGIN TRANSACTION; UPDATE [dbo].[usertable] SET [FIELD1] = @p1 WHERE [YCSB_KEY] = @p2; SET @rows = @@ROWCOUNT; COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON); SELECT @rows

-- procedure call
[dbo].[dbprobe_usertable_update]

-- delayed transaction, procedure call
SET NOCOUNT ON; SET XACT_ABORT ON; DECLARE @rows int; BEGIN TRANSACTION; EXEC @rows = [dbo].[dbprobe_usertable_update] @p1, @p2, @p3, @p4; COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON); SELECT @rows

-- delayed transaction, procedure call, declarations
@p1 VARBINARY(255), @p2 VARBINARY(100), @p3 VARBINARY(100), @p4 VARBINARY(100)


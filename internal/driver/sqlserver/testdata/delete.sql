-- one key
DELETE FROM [dbo].[usertable] WHERE [YCSB_KEY] = @p1

-- declarations
@p1 VARBINARY(255)

-- delayed transaction
SET NOCOUNT ON; SET XACT_ABORT ON; DECLARE @rows int; BEGIN TRANSACTION; DELETE FROM [dbo].[usertable] WHERE [YCSB_KEY] = @p1; SET @rows = @@ROWCOUNT; COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON); SELECT @rows

-- procedure call
[dbo].[dbprobe_usertable_delete]

-- delayed transaction, procedure call
SET NOCOUNT ON; SET XACT_ABORT ON; DECLARE @rows int; BEGIN TRANSACTION; EXEC @rows = [dbo].[dbprobe_usertable_delete] @p1; COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON); SELECT @rows

-- delayed transaction, procedure call, declarations
@p1 VARBINARY(255)


-- all fields
SELECT [FIELD0], [FIELD1], [FIELD2] FROM [dbo].[usertable] WHERE [YCSB_KEY] = @p1

-- fields 2, 0
SELECT [FIELD2], [FIELD0] FROM [dbo].[usertable] WHERE [YCSB_KEY] = @p1

-- field 1
SELECT [FIELD1] FROM [dbo].[usertable] WHERE [YCSB_KEY] = @p1

-- declarations
@p1 VARBINARY(255)

-- procedure call
[dbo].[dbprobe_usertable_read]


-- all fields
SELECT TOP (@p2) [YCSB_KEY], [FIELD0], [FIELD1], [FIELD2] FROM [dbo].[usertable] WHERE [YCSB_KEY] >= @p1 ORDER BY [YCSB_KEY]

-- field 1
SELECT TOP (@p2) [YCSB_KEY], [FIELD1] FROM [dbo].[usertable] WHERE [YCSB_KEY] >= @p1 ORDER BY [YCSB_KEY]

-- declarations
@p1 VARBINARY(255), @p2 BIGINT

-- procedure call
[dbo].[dbprobe_usertable_scan]


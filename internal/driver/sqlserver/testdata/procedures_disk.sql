-- dbprobe_usertable_read
CREATE PROCEDURE [dbo].[dbprobe_usertable_read]
    @key VARBINARY(255)
AS BEGIN
    SET NOCOUNT ON;
    SELECT [FIELD0], [FIELD1], [FIELD2] FROM [dbo].[usertable] WHERE [YCSB_KEY] = @key;
END

-- dbprobe_usertable_scan
CREATE PROCEDURE [dbo].[dbprobe_usertable_scan]
    @key VARBINARY(255),
    @count INT
AS BEGIN
    SET NOCOUNT ON;
    SELECT TOP (@count) [YCSB_KEY], [FIELD0], [FIELD1], [FIELD2] FROM [dbo].[usertable] WHERE [YCSB_KEY] >= @key ORDER BY [YCSB_KEY];
END

-- dbprobe_usertable_update
CREATE PROCEDURE [dbo].[dbprobe_usertable_update]
    @key VARBINARY(255),
    @f0 VARBINARY(100),
    @f1 VARBINARY(100),
    @f2 VARBINARY(100)
AS BEGIN
    SET NOCOUNT ON;
    UPDATE [dbo].[usertable] SET [FIELD0] = ISNULL(@f0, [FIELD0]), [FIELD1] = ISNULL(@f1, [FIELD1]), [FIELD2] = ISNULL(@f2, [FIELD2]) WHERE [YCSB_KEY] = @key;
    RETURN @@ROWCOUNT;
END

-- dbprobe_usertable_insert
CREATE PROCEDURE [dbo].[dbprobe_usertable_insert]
    @key VARBINARY(255),
    @f0 VARBINARY(100),
    @f1 VARBINARY(100),
    @f2 VARBINARY(100)
AS BEGIN
    SET NOCOUNT ON;
    INSERT INTO [dbo].[usertable] ([YCSB_KEY], [FIELD0], [FIELD1], [FIELD2]) VALUES (@key, @f0, @f1, @f2);
END

-- dbprobe_usertable_delete
CREATE PROCEDURE [dbo].[dbprobe_usertable_delete]
    @key VARBINARY(255)
AS BEGIN
    SET NOCOUNT ON;
    DELETE FROM [dbo].[usertable] WHERE [YCSB_KEY] = @key;
    RETURN @@ROWCOUNT;
END


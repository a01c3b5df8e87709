-- ensure
IF OBJECT_ID(N'[dbo].[dbprobe_tables]', N'U') IS NULL CREATE TABLE [dbo].[dbprobe_tables] (table_name NVARCHAR(128) NOT NULL PRIMARY KEY, created_at DATETIME2 NOT NULL, dbprobe_version NVARCHAR(128) NOT NULL)

-- recorded
IF OBJECT_ID(N'[dbo].[dbprobe_tables]', N'U') IS NULL SELECT 0 ELSE SELECT COUNT(*) FROM [dbo].[dbprobe_tables] WHERE table_name = @p1

-- record
DELETE FROM [dbo].[dbprobe_tables] WHERE table_name = @p1; INSERT INTO [dbo].[dbprobe_tables] (table_name, created_at, dbprobe_version) VALUES (@p1, SYSUTCDATETIME(), @p2)

-- forget
IF OBJECT_ID(N'[dbo].[dbprobe_tables]', N'U') IS NOT NULL DELETE FROM [dbo].[dbprobe_tables] WHERE table_name = @p1


-- ensure
IF OBJECT_ID(N'[dbo].[dbprobe_tables]', N'U') IS NULL CREATE TABLE [dbo].[dbprobe_tables] (table_name NVARCHAR(128) NOT NULL PRIMARY KEY, created_at DATETIME2 NOT NULL, dbprobe_version NVARCHAR(128) NOT NULL, table_identity NVARCHAR(100) NULL)

-- add identity
IF COL_LENGTH(N'[dbo].[dbprobe_tables]', N'table_identity') IS NULL ALTER TABLE [dbo].[dbprobe_tables] ADD table_identity NVARCHAR(100) NULL

-- shape
SELECT CASE WHEN OBJECT_ID(N'[dbo].[dbprobe_tables]', N'U') IS NULL THEN 0 ELSE 1 END, CASE WHEN COL_LENGTH(N'[dbo].[dbprobe_tables]', N'table_identity') IS NULL THEN 0 ELSE 1 END

-- recorded
SELECT ISNULL(table_identity, N'') FROM [dbo].[dbprobe_tables] WHERE table_name = @p1

-- recorded, legacy
SELECT N'' FROM [dbo].[dbprobe_tables] WHERE table_name = @p1

-- record
DELETE FROM [dbo].[dbprobe_tables] WHERE table_name = @p1; INSERT INTO [dbo].[dbprobe_tables] (table_name, created_at, dbprobe_version, table_identity) VALUES (@p1, SYSUTCDATETIME(), @p2, @p3)

-- forget
IF OBJECT_ID(N'[dbo].[dbprobe_tables]', N'U') IS NOT NULL DELETE FROM [dbo].[dbprobe_tables] WHERE table_name = @p1

-- leftover filegroups
SELECT fg.name, x.physical_name FROM [dbo].[dbprobe_tables] AS m JOIN sys.filegroups AS fg ON m.table_name = CONCAT(N'filegroup ', fg.name) CROSS APPLY (SELECT MIN(f.physical_name) AS physical_name FROM sys.database_files AS f WHERE f.data_space_id = fg.data_space_id) AS x WHERE m.table_identity = CONCAT(fg.data_space_id, N' ', x.physical_name) ORDER BY m.created_at


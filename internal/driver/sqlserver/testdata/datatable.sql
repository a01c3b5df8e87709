-- create
CREATE TABLE [dbo].[storage_src] (id BIGINT NOT NULL PRIMARY KEY CLUSTERED, payload CHAR(2000) NOT NULL)

-- create, on a filegroup
CREATE TABLE [dbo].[storage_dst] (id BIGINT NOT NULL PRIMARY KEY CLUSTERED, payload CHAR(2000) NOT NULL) ON [dbprobe_fg_0123456789abcdef]

-- fill
INSERT INTO [dbo].[storage_src] WITH (TABLOCK) (id, payload) SELECT @p1 + seq.n - 1, REPLICATE('x', 2000) FROM (SELECT TOP (@p2) ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS n FROM sys.all_columns AS a CROSS JOIN sys.all_columns AS b) AS seq

-- size
SELECT CASE WHEN OBJECT_ID(N'[dbo].[storage_src]', N'U') IS NULL THEN CAST(-1 AS bigint) ELSE (SELECT ISNULL(SUM(a.total_pages), 0) FROM sys.partitions AS p JOIN sys.allocation_units AS a ON a.container_id = CASE WHEN a.type IN (1, 3) THEN p.hobt_id ELSE p.partition_id END WHERE p.object_id = OBJECT_ID(N'[dbo].[storage_src]', N'U')) * CAST(8192 AS bigint) END

-- copy, MAXDOP 1
SELECT id, payload INTO [dbo].[storage_dst] ON [dbprobe_fg_0123456789abcdef] FROM [dbo].[storage_src] OPTION (MAXDOP 1)

-- copy, MAXDOP 8
SELECT id, payload INTO [dbo].[storage_dst] FROM [dbo].[storage_src] OPTION (MAXDOP 8)

-- insert select
INSERT INTO [dbo].[storage_dst] (id, payload) SELECT id + @p3, payload FROM [dbo].[storage_src] WHERE id BETWEEN @p1 AND @p2

-- scan, whole
SELECT COUNT_BIG(*), ISNULL(SUM(CAST(DATALENGTH(payload) AS bigint)), 0) FROM [dbo].[storage_src]

-- scan, slice
SELECT COUNT_BIG(*), ISNULL(SUM(CAST(DATALENGTH(payload) AS bigint)), 0) FROM [dbo].[storage_src] WHERE id BETWEEN @p1 AND @p2

-- id range
SELECT MIN(id), MAX(id) FROM [dbo].[storage_src]

-- insert rows, not bulk
INSERT INTO [dbo].[storage_src] (id, payload) VALUES (@p1, @p2), (@p3, @p4)

-- bulk copy
INSERTBULK {"TableName":"[dbo].[storage_src]","ColumnsName":["id","payload"],"Options":{"CheckConstraints":false,"FireTriggers":false,"KeepNulls":false,"KilobytesPerBatch":0,"RowsPerBatch":0,"Order":null,"Tablock":false}}

-- add filegroup
ALTER DATABASE CURRENT ADD FILEGROUP [dbprobe_fg_0123456789abcdef]; ALTER DATABASE CURRENT ADD FILE (NAME = N'dbprobe_fg_0123456789abcdef', FILENAME = N'/var/opt/mssql/data/dbprobe_fg_0123456789abcdef.ndf') TO FILEGROUP [dbprobe_fg_0123456789abcdef]

-- add filegroup, Windows path
ALTER DATABASE CURRENT ADD FILEGROUP [dbprobe_fg_0123456789abcdef]; ALTER DATABASE CURRENT ADD FILE (NAME = N'dbprobe_fg_0123456789abcdef', FILENAME = N'D:\data\dbprobe_fg_0123456789abcdef.ndf') TO FILEGROUP [dbprobe_fg_0123456789abcdef]

-- filegroup identity
SELECT CONCAT(fg.data_space_id, N' ', (SELECT MIN(f.physical_name) FROM sys.database_files AS f WHERE f.data_space_id = fg.data_space_id)) FROM sys.filegroups AS fg WHERE fg.name = @p1

-- remove filegroup
IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'dbprobe_fg_0123456789abcdef') ALTER DATABASE CURRENT REMOVE FILE [dbprobe_fg_0123456789abcdef]; IF EXISTS (SELECT 1 FROM sys.filegroups WHERE name = N'dbprobe_fg_0123456789abcdef') ALTER DATABASE CURRENT REMOVE FILEGROUP [dbprobe_fg_0123456789abcdef]

-- cache size
SELECT CAST(c.value_in_use AS bigint) * 1048576, CAST(i.committed_target_kb AS bigint) * 1024 FROM sys.configurations AS c CROSS JOIN sys.dm_os_sys_info AS i WHERE c.name = N'max server memory (MB)'

-- cache counts
SELECT RTRIM(counter_name), CAST(cntr_value AS bigint)
FROM sys.dm_os_performance_counters
WHERE object_name LIKE N'%:Buffer Manager%' AND counter_name IN (N'Page lookups/sec', N'Page reads/sec')

-- SQL text bound
SELECT TOP (@p1) * FROM [t:x] WHERE k = @p2 OR j = @p2 -- :no

-- transaction begin, commit, rollback
BEGIN TRANSACTION
COMMIT TRANSACTION
IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION


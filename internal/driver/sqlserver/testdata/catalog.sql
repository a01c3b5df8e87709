-- table exists
SELECT CASE WHEN OBJECT_ID(N'[dbo].[usertable]', N'U') IS NULL THEN 0 ELSE 1 END

-- table identity
SELECT CONCAT(o.object_id, N' ', CONVERT(nvarchar(27), o.create_date, 126)) FROM sys.objects AS o WHERE o.object_id = OBJECT_ID(N'[dbo].[usertable]', N'U')

-- table state
SELECT t.is_memory_optimized, t.durability_desc, ISNULL(i.type_desc, N''), ISNULL((SELECT MAX(h.bucket_count) FROM sys.hash_indexes AS h WHERE h.object_id = t.object_id), 0) FROM sys.tables AS t LEFT JOIN sys.indexes AS i ON i.object_id = t.object_id AND i.index_id <= 1 WHERE t.object_id = OBJECT_ID(N'[dbo].[usertable]', N'U')

-- columns
SELECT c.name FROM sys.columns AS c WHERE c.object_id = OBJECT_ID(N'[dbo].[usertable]', N'U') ORDER BY c.column_id

-- has rows
SELECT TOP (1) 1 FROM [dbo].[usertable]

-- existing procedures
SELECT COUNT(*) FROM (VALUES (OBJECT_ID(N'[dbo].[dbprobe_usertable_read]', N'P')), (OBJECT_ID(N'[dbo].[dbprobe_usertable_scan]', N'P')), (OBJECT_ID(N'[dbo].[dbprobe_usertable_update]', N'P')), (OBJECT_ID(N'[dbo].[dbprobe_usertable_insert]', N'P')), (OBJECT_ID(N'[dbo].[dbprobe_usertable_delete]', N'P'))) AS p(id) WHERE p.id IS NOT NULL

-- recompile procedures
IF OBJECT_ID(N'[dbo].[dbprobe_usertable_read]', N'P') IS NOT NULL EXEC sys.sp_recompile @objname = N'[dbo].[dbprobe_usertable_read]'; IF OBJECT_ID(N'[dbo].[dbprobe_usertable_scan]', N'P') IS NOT NULL EXEC sys.sp_recompile @objname = N'[dbo].[dbprobe_usertable_scan]'; IF OBJECT_ID(N'[dbo].[dbprobe_usertable_update]', N'P') IS NOT NULL EXEC sys.sp_recompile @objname = N'[dbo].[dbprobe_usertable_update]'; IF OBJECT_ID(N'[dbo].[dbprobe_usertable_insert]', N'P') IS NOT NULL EXEC sys.sp_recompile @objname = N'[dbo].[dbprobe_usertable_insert]'; IF OBJECT_ID(N'[dbo].[dbprobe_usertable_delete]', N'P') IS NOT NULL EXEC sys.sp_recompile @objname = N'[dbo].[dbprobe_usertable_delete]'

-- drop table
IF OBJECT_ID(N'[dbo].[usertable]', N'U') IS NOT NULL DROP TABLE [dbo].[usertable]

-- database state
SELECT @@VERSION, CAST(SERVERPROPERTY('EngineEdition') AS int), CAST(SERVERPROPERTY('Edition') AS nvarchar(128)), ISNULL(CAST(DATABASEPROPERTYEX(DB_NAME(), 'ServiceObjective') AS nvarchar(128)), N''), ISNULL(CAST(DATABASEPROPERTYEX(DB_NAME(), 'Edition') AS nvarchar(128)), N''), DB_NAME(), ISNULL(SCHEMA_NAME(), N'dbo'), ISNULL(USER_NAME(), N''), d.delayed_durability_desc, d.is_memory_optimized_elevate_to_snapshot_on, d.recovery_model_desc, CAST(d.compatibility_level AS int), d.snapshot_isolation_state_desc, d.is_read_committed_snapshot_on, CAST(ISNULL(SERVERPROPERTY('IsXTPSupported'), 0) AS int), CAST(ISNULL(DATABASEPROPERTYEX(DB_NAME(), 'IsXTPSupported'), 0) AS int), (SELECT COUNT(*) FROM sys.filegroups WHERE type = 'FX'), ISNULL((SELECT TOP (1) name FROM sys.filegroups WHERE type = 'FX' ORDER BY data_space_id), N''), (SELECT COUNT(*) FROM sys.database_files AS f JOIN sys.filegroups AS g ON g.data_space_id = f.data_space_id WHERE g.type = 'FX'), ISNULL(HAS_PERMS_BY_NAME(DB_NAME(), 'DATABASE', 'ALTER'), 0) FROM sys.databases AS d WHERE d.name = DB_NAME()

-- session options
SELECT CAST(s.transaction_isolation_level AS int), CAST(@@OPTIONS AS int), CAST(@@LOCK_TIMEOUT AS int), CAST(s.deadlock_priority AS int) FROM sys.dm_exec_sessions AS s WHERE s.session_id = @@SPID

-- session options, without sys.dm_exec_sessions
SELECT CAST(NULL AS int), CAST(@@OPTIONS AS int), CAST(@@LOCK_TIMEOUT AS int), CAST(NULL AS int)

-- lifecycle lock
DECLARE @r int; EXEC @r = sp_getapplock @Resource = N'dbprobe_tables', @LockMode = 'Exclusive', @LockOwner = 'Session', @LockTimeout = 60000; SELECT @r

-- lifecycle unlock
EXEC sp_releaseapplock @Resource = N'dbprobe_tables', @LockOwner = 'Session'


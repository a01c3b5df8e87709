-- connection limit
SELECT @@MAX_CONNECTIONS, CAST(ISNULL(HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE'), 0) AS int)

-- user sessions
SELECT COUNT(*) FROM sys.dm_exec_sessions WHERE is_user_process = 1

-- data file
SELECT TOP (1) physical_name FROM sys.database_files WHERE type = 0 ORDER BY file_id

-- server clock
SELECT DATEDIFF_BIG(microsecond, '19700101', SYSUTCDATETIME())


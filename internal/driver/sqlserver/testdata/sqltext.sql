-- plan
SET SHOWPLAN_TEXT ON
SET SHOWPLAN_TEXT OFF

-- plan, analyzed
SET STATISTICS XML ON
BEGIN TRANSACTION
IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION
SET STATISTICS XML OFF

-- statement costs
SELECT COUNT_BIG(*), ISNULL(SUM(qs.execution_count), 0), ISNULL(SUM(qs.total_logical_reads), 0), ISNULL(SUM(qs.total_physical_reads), 0), ISNULL(SUM(qs.total_rows), 0), ISNULL(SUM(qs.total_worker_time), 0), ISNULL(SUM(qs.total_elapsed_time), 0) FROM sys.dm_exec_query_stats AS qs CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) AS st WHERE st.dbid = DB_ID() AND RTRIM(SUBSTRING(st.text, qs.statement_start_offset / 2 + 1, (CASE qs.statement_end_offset WHEN -1 THEN DATALENGTH(st.text) ELSE qs.statement_end_offset END - qs.statement_start_offset) / 2 + 1)) = RTRIM(@p1)

-- database costs
SELECT (SELECT MAX(cntr_value) FROM sys.dm_os_performance_counters WHERE object_name LIKE N'%:Databases%' AND counter_name = N'Transactions/sec' AND instance_name = DB_NAME()), (SELECT MAX(cntr_value) FROM sys.dm_os_performance_counters WHERE object_name LIKE N'%:Buffer Manager%' AND counter_name = N'Page lookups/sec'), (SELECT MAX(cntr_value) FROM sys.dm_os_performance_counters WHERE object_name LIKE N'%:Buffer Manager%' AND counter_name = N'Page reads/sec')

-- table path
SELECT TOP (1) f.physical_name FROM sys.indexes AS i JOIN sys.database_files AS f ON f.data_space_id = i.data_space_id WHERE i.object_id = OBJECT_ID(@p1, N'U') AND i.index_id IN (0, 1) ORDER BY f.file_id


-- requests
SELECT ISNULL(r.wait_type, N''),
  CASE WHEN s.host_process_id = @pid AND s.host_name = HOST_NAME() AND s.program_name = APP_NAME()
    THEN CAST(1 AS bit) ELSE CAST(0 AS bit) END
FROM sys.dm_exec_requests AS r
JOIN sys.dm_exec_sessions AS s ON s.session_id = r.session_id
WHERE s.is_user_process = 1 AND r.session_id <> @@SPID


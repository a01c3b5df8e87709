-- dbprobe_usertable_read
IF OBJECT_ID(N'[dbo].[dbprobe_usertable_read]', N'P') IS NOT NULL DROP PROCEDURE [dbo].[dbprobe_usertable_read]

-- dbprobe_usertable_scan
IF OBJECT_ID(N'[dbo].[dbprobe_usertable_scan]', N'P') IS NOT NULL DROP PROCEDURE [dbo].[dbprobe_usertable_scan]

-- dbprobe_usertable_update
IF OBJECT_ID(N'[dbo].[dbprobe_usertable_update]', N'P') IS NOT NULL DROP PROCEDURE [dbo].[dbprobe_usertable_update]

-- dbprobe_usertable_insert
IF OBJECT_ID(N'[dbo].[dbprobe_usertable_insert]', N'P') IS NOT NULL DROP PROCEDURE [dbo].[dbprobe_usertable_insert]

-- dbprobe_usertable_delete
IF OBJECT_ID(N'[dbo].[dbprobe_usertable_delete]', N'P') IS NOT NULL DROP PROCEDURE [dbo].[dbprobe_usertable_delete]


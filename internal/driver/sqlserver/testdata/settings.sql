-- durability delayed (scope database): set DELAYED_DURABILITY
ALTER DATABASE CURRENT SET DELAYED_DURABILITY = FORCED

-- durability delayed (scope database): put DELAYED_DURABILITY back
DECLARE @now nvarchar(60) = (SELECT delayed_durability_desc FROM sys.databases WHERE name = DB_NAME()); IF @now = N'FORCED' ALTER DATABASE CURRENT SET DELAYED_DURABILITY = DISABLED; SELECT @now

-- durability delayed (scope transaction): set DELAYED_DURABILITY
ALTER DATABASE CURRENT SET DELAYED_DURABILITY = ALLOWED

-- durability delayed (scope transaction): put DELAYED_DURABILITY back
DECLARE @now nvarchar(60) = (SELECT delayed_durability_desc FROM sys.databases WHERE name = DB_NAME()); IF @now = N'ALLOWED' ALTER DATABASE CURRENT SET DELAYED_DURABILITY = DISABLED; SELECT @now

-- table type memory: set MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT
ALTER DATABASE CURRENT SET MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT = ON

-- table type memory: put MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT back
DECLARE @now nvarchar(60) = (SELECT CASE is_memory_optimized_elevate_to_snapshot_on WHEN 1 THEN N'ON' ELSE N'OFF' END FROM sys.databases WHERE name = DB_NAME()); IF @now = N'ON' ALTER DATABASE CURRENT SET MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT = OFF; SELECT @now

-- durability full: set DELAYED_DURABILITY
ALTER DATABASE CURRENT SET DELAYED_DURABILITY = DISABLED

-- durability full: put DELAYED_DURABILITY back
DECLARE @now nvarchar(60) = (SELECT delayed_durability_desc FROM sys.databases WHERE name = DB_NAME()); IF @now = N'DISABLED' ALTER DATABASE CURRENT SET DELAYED_DURABILITY = FORCED; SELECT @now


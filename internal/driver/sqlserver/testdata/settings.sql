-- durability delayed (scope database): set DELAYED_DURABILITY
ALTER DATABASE CURRENT SET DELAYED_DURABILITY = FORCED

-- durability delayed (scope database): put DELAYED_DURABILITY back
IF (SELECT delayed_durability_desc FROM sys.databases WHERE database_id = DB_ID()) = N'FORCED' ALTER DATABASE CURRENT SET DELAYED_DURABILITY = DISABLED

-- durability delayed (scope transaction): set DELAYED_DURABILITY
ALTER DATABASE CURRENT SET DELAYED_DURABILITY = ALLOWED

-- durability delayed (scope transaction): put DELAYED_DURABILITY back
IF (SELECT delayed_durability_desc FROM sys.databases WHERE database_id = DB_ID()) = N'ALLOWED' ALTER DATABASE CURRENT SET DELAYED_DURABILITY = DISABLED

-- table type memory: set MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT
ALTER DATABASE CURRENT SET MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT = ON

-- table type memory: put MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT back
IF (SELECT is_memory_optimized_elevate_to_snapshot_on FROM sys.databases WHERE database_id = DB_ID()) = 1 ALTER DATABASE CURRENT SET MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT = OFF

-- durability full: set DELAYED_DURABILITY
ALTER DATABASE CURRENT SET DELAYED_DURABILITY = DISABLED

-- durability full: put DELAYED_DURABILITY back
IF (SELECT delayed_durability_desc FROM sys.databases WHERE database_id = DB_ID()) = N'DISABLED' ALTER DATABASE CURRENT SET DELAYED_DURABILITY = FORCED


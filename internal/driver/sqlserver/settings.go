package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Azure SQL Database's SERVERPROPERTY('EngineEdition'). Its databases have
// no filegroups to manage: memory-optimized storage comes with the service
// tier (Premium and Business Critical).
const engineAzureSQLDatabase = 5

// engineManagedInstance is Azure SQL Managed Instance's: memory-optimized
// tables on its Business Critical tier only, and files placed by the
// service (ADD FILE takes no FILENAME there).
const engineManagedInstance = 8

// dbState is what Open reads from the server: who and where it is, the
// database options dbprobe may change, and what the database supports.
type dbState struct {
	version           string // @@VERSION
	engineEdition     int
	edition           string
	serviceObjective  string // Azure SQL Database's objective, "" elsewhere
	serviceTier       string // DATABASEPROPERTYEX(…, 'Edition') on Azure: Hyperscale, BusinessCritical, …
	database, schema  string
	user              string
	delayedDurability string // DISABLED, ALLOWED or FORCED
	elevateToSnapshot bool   // MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT
	recoveryModel     string
	compatibility     int
	snapshotIsolation string
	readCommittedSnap bool
	serverXTP         bool   // SERVERPROPERTY('IsXTPSupported')
	databaseXTP       bool   // DATABASEPROPERTYEX(…, 'IsXTPSupported')
	memoryFilegroups  int    // filegroups of type FX (MEMORY_OPTIMIZED_DATA)
	memoryFilegroup   string // the first one's name
	memoryFiles       int    // files in them: a filegroup without one fails CREATE TABLE (41337)
	canAlter          bool   // HAS_PERMS_BY_NAME(db, 'DATABASE', 'ALTER')
}

// stateQuery reads a dbState in one round trip. sys.databases is read for
// the current database only, which any user may see, and matched by name:
// on Azure SQL Database its database_id is unique within the logical
// server while DB_ID() is unique within the database or elastic pool, so
// the two can differ and a match by id finds no row (Microsoft's DB_ID
// page says so). DB_ID() stays right for the DMVs (see monitor.go).
const stateQuery = "SELECT @@VERSION, CAST(SERVERPROPERTY('EngineEdition') AS int), " +
	"CAST(SERVERPROPERTY('Edition') AS nvarchar(128)), " +
	"ISNULL(CAST(DATABASEPROPERTYEX(DB_NAME(), 'ServiceObjective') AS nvarchar(128)), N''), " +
	"ISNULL(CAST(DATABASEPROPERTYEX(DB_NAME(), 'Edition') AS nvarchar(128)), N''), " +
	"DB_NAME(), ISNULL(SCHEMA_NAME(), N'dbo'), ISNULL(USER_NAME(), N''), " +
	"d.delayed_durability_desc, d.is_memory_optimized_elevate_to_snapshot_on, d.recovery_model_desc, " +
	"CAST(d.compatibility_level AS int), d.snapshot_isolation_state_desc, d.is_read_committed_snapshot_on, " +
	"CAST(ISNULL(SERVERPROPERTY('IsXTPSupported'), 0) AS int), " +
	"CAST(ISNULL(DATABASEPROPERTYEX(DB_NAME(), 'IsXTPSupported'), 0) AS int), " +
	"(SELECT COUNT(*) FROM sys.filegroups WHERE type = 'FX'), " +
	"ISNULL((SELECT TOP (1) name FROM sys.filegroups WHERE type = 'FX' ORDER BY data_space_id), N''), " +
	"(SELECT COUNT(*) FROM sys.database_files AS f JOIN sys.filegroups AS g ON g.data_space_id = f.data_space_id WHERE g.type = 'FX'), " +
	"ISNULL(HAS_PERMS_BY_NAME(DB_NAME(), 'DATABASE', 'ALTER'), 0) " +
	"FROM sys.databases AS d WHERE d.name = DB_NAME()"

// readState runs stateQuery.
func readState(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (dbState, error) {
	var st dbState
	var serverXTP, dbXTP, canAlter int
	err := q.QueryRowContext(ctx, stateQuery).Scan(&st.version, &st.engineEdition, &st.edition, &st.serviceObjective, &st.serviceTier,
		&st.database, &st.schema, &st.user, &st.delayedDurability, &st.elevateToSnapshot, &st.recoveryModel,
		&st.compatibility, &st.snapshotIsolation, &st.readCommittedSnap, &serverXTP, &dbXTP,
		&st.memoryFilegroups, &st.memoryFilegroup, &st.memoryFiles, &canAlter)
	st.serverXTP, st.databaseXTP, st.canAlter = serverXTP == 1, dbXTP == 1, canAlter == 1
	return st, err
}

// product names the service as Microsoft does: Azure SQL Database is not
// "SQL Server" to its users, though it speaks the same protocol.
func product(engineEdition int) string {
	if engineEdition == engineAzureSQLDatabase {
		return "Azure SQL Database"
	}
	return "SQL Server"
}

// serverVersion is the first line of @@VERSION (the rest is the build date,
// copyright and host OS), named "Azure SQL Database" on that service, whose
// @@VERSION says only "Microsoft SQL Azure".
func serverVersion(version string, engineEdition int) string {
	first, _, _ := strings.Cut(strings.TrimSpace(version), "\n")
	first = strings.TrimSpace(first)
	if engineEdition == engineAzureSQLDatabase {
		return "Azure SQL Database (" + first + ")"
	}
	return first
}

// memorySupport returns why the database cannot hold memory-optimized
// tables, as the error Open returns for table type memory or nondurable, or
// nil when it can. Each refusal names the edition or setting and what to do,
// before anything is changed.
func memorySupport(st dbState, tt driver.TableType) error {
	knob := "memory-optimized tables (table type " + tt.String() + ")"
	switch st.engineEdition {
	case engineAzureSQLDatabase:
		tier := st.serviceObjective
		if tier == "" {
			tier = "unknown"
		}
		// Hyperscale keeps some In-Memory OLTP objects but no
		// memory-optimized tables, whatever IsXTPSupported says.
		if strings.EqualFold(st.serviceTier, "Hyperscale") {
			return driver.Unsupported(fmt.Sprintf("Azure SQL Database %q (Hyperscale, service objective %s)", st.database, tier), knob,
				"the Hyperscale tier supports none: use table type disk, or a Premium or Business Critical database")
		}
		if st.databaseXTP {
			return nil
		}
		return driver.Unsupported(fmt.Sprintf("Azure SQL Database %q at service objective %s", st.database, tier), knob,
			"they need the Premium or Business Critical tier: scale the database to one, or use table type disk")
	case engineManagedInstance:
		if !st.databaseXTP {
			return driver.Unsupported(fmt.Sprintf("Azure SQL Managed Instance database %q", st.database), knob,
				"only the Business Critical tier of Managed Instance supports them: use a Business Critical instance, or table type disk")
		}
	default:
		if !st.serverXTP {
			return driver.Unsupported(fmt.Sprintf("SQL Server %s (database %q)", strings.TrimSpace(st.edition), st.database), knob,
				"SERVERPROPERTY('IsXTPSupported') is 0: use a 64-bit SQL Server 2016 SP1 or later, or table type disk")
		}
	}
	db := quoteName(st.database)
	// Managed Instance places a database's files itself.
	file := "(NAME = 'dbprobe_mod', FILENAME = '<a directory of the server>/dbprobe_mod')"
	if st.engineEdition == engineManagedInstance {
		file = "(NAME = 'dbprobe_mod')"
	}
	what := fmt.Sprintf("SQL Server database %q", st.database)
	if st.engineEdition == engineManagedInstance {
		what = fmt.Sprintf("Azure SQL Managed Instance database %q", st.database)
	}
	if st.memoryFilegroups == 0 {
		return driver.Unsupported(what, "MEMORY_OPTIMIZED_DATA filegroup, which "+knob+" need",
			"add one (ALTER DATABASE "+db+" ADD FILEGROUP [dbprobe_mod] CONTAINS MEMORY_OPTIMIZED_DATA; ALTER DATABASE "+db+
				" ADD FILE "+file+" TO FILEGROUP [dbprobe_mod]) or use table type disk")
	}
	if st.memoryFiles == 0 {
		// The filegroup alone passes for support, then CREATE TABLE fails
		// with 41337.
		fg := quoteName(st.memoryFilegroup)
		return driver.Unsupported(what, "file in its MEMORY_OPTIMIZED_DATA filegroup "+fg+", which "+knob+" need (CREATE TABLE would fail with error 41337)",
			"add one (ALTER DATABASE "+db+" ADD FILE "+file+" TO FILEGROUP "+fg+") or use table type disk")
	}
	return nil
}

// change is one database option dbprobe sets at Open and puts back at Close.
type change struct {
	option   string // the ALTER DATABASE option: DELAYED_DURABILITY, …
	from     string // the value found
	to       string // the value set
	why      string // the knob that asked for it, for messages
	database string // the database's name, for messages
	// apply sets the option. restore puts from back, but only while the
	// option still holds to, so that a value someone else set since is
	// kept; it returns the value it found (NULL when sys.databases showed
	// no row), so that an option it could not read is reported rather
	// than compared with NULL and silently left as dbprobe set it.
	apply, restore string
}

// The options' current values, as sys.databases shows them, in the words
// ALTER DATABASE uses. The database is matched by name (see stateQuery).
const (
	delayedDurabilityNow = "(SELECT delayed_durability_desc FROM sys.databases WHERE name = DB_NAME())"
	elevateNow           = "(SELECT CASE is_memory_optimized_elevate_to_snapshot_on WHEN 1 THEN N'ON' ELSE N'OFF' END FROM sys.databases WHERE name = DB_NAME())"
)

// restoreStatement puts option back to from when now (an expression of
// its current value) says it still holds to, and returns the value found.
func restoreStatement(option, now, to, from string) string {
	return "DECLARE @now nvarchar(60) = " + now + "; " +
		"IF @now = N'" + to + "' ALTER DATABASE CURRENT SET " + option + " = " + from + "; " +
		"SELECT @now"
}

// restoreOutcome judges what restore found: the option could not be read
// (no row, so it may still hold dbprobe's value) is an error that says how
// to put it back by hand; a value found, put back or changed by someone
// else since, is not.
func restoreOutcome(c change, found sql.NullString) error {
	if found.Valid {
		return nil
	}
	return fmt.Errorf("sqlserver: could not read %s of database %q to put it back (sys.databases shows no row named DB_NAME()); it may still be %s as dbprobe set it: run ALTER DATABASE %s SET %s = %s",
		c.option, c.database, c.to, quoteName(c.database), c.option, c.from)
}

// onOff maps a bit option to its T-SQL value.
func onOff(b bool) string {
	if b {
		return "ON"
	}
	return "OFF"
}

// planChanges returns the database options opts needs changed from st, in
// the order to apply them; nothing is changed for an option that already
// holds the wanted value.
//
// Durability: server leaves DELAYED_DURABILITY alone; full sets DISABLED;
// delayed sets FORCED (scope database: every commit is delayed) or ALLOWED
// (scope transaction: the sessions ask for it on each commit).
//
// Memory-optimized tables need MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT = ON:
// without it a memory-optimized table read or written inside an explicit
// transaction at the default READ COMMITTED isolation fails (error 41368),
// and dbprobe's batch loads and transaction-scope writes are explicit
// transactions.
func planChanges(opts driver.Options, st dbState) ([]change, error) {
	var out []change
	want := ""
	why := "durability " + opts.Durability.String()
	switch opts.Durability {
	case driver.DurabilityFull:
		want = "DISABLED"
	case driver.DurabilityDelayed:
		want = "FORCED"
		if opts.DurabilityScope == driver.ScopeTransaction {
			want = "ALLOWED"
		}
		why += " (scope " + opts.DurabilityScope.String() + ")"
	}
	if want != "" && !strings.EqualFold(st.delayedDurability, want) {
		switch st.delayedDurability {
		case "DISABLED", "ALLOWED", "FORCED":
		default:
			// Close could not put an unknown value back.
			return nil, fmt.Errorf("sqlserver: database %q reports DELAYED_DURABILITY %q, which dbprobe does not know; not changing it",
				st.database, st.delayedDurability)
		}
		out = append(out, change{
			option: "DELAYED_DURABILITY", from: st.delayedDurability, to: want, why: why, database: st.database,
			apply:   "ALTER DATABASE CURRENT SET DELAYED_DURABILITY = " + want,
			restore: restoreStatement("DELAYED_DURABILITY", delayedDurabilityNow, want, st.delayedDurability),
		})
	}
	if opts.TableType != driver.TableDisk && !st.elevateToSnapshot {
		out = append(out, change{
			option: "MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT", from: "OFF", to: "ON", why: "table type " + opts.TableType.String(), database: st.database,
			apply:   "ALTER DATABASE CURRENT SET MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT = ON",
			restore: restoreStatement("MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT", elevateNow, "ON", "OFF"),
		})
	}
	return out, nil
}

// permissionError is the bad-input error for changes the user may not make:
// it names the permission, the option and the knob that asked for it.
func permissionError(st dbState, c change) error {
	user := st.user
	if user == "" {
		user = "the login's user"
	}
	return badinput.New("SQL Server database %q: %s needs %s = %s, and changing it needs the ALTER permission on the database, which %s lacks; "+
		"GRANT ALTER ON DATABASE::%s TO %s, or set the option yourself, or use durability server and table type disk to leave the database as it is",
		st.database, c.why, c.option, c.to, quoteName(user), quoteName(st.database), quoteName(user))
}

// settings are the values Info reports, read back from the server after
// Open's changes. applied are the changes Open made; they say what Close
// will put back.
func settings(st dbState, opts driver.Options, applied []change, auth string) []driver.Setting {
	was := func(option string) string {
		for _, c := range applied {
			if c.option == option {
				return " (set by dbprobe, was " + c.from + "; put back at exit)"
			}
		}
		return ""
	}
	out := []driver.Setting{
		{Name: "database", Value: st.database},
		{Name: "schema", Value: st.schema},
		{Name: "edition", Value: strings.TrimSpace(st.edition)},
	}
	if st.serviceObjective != "" {
		out = append(out, driver.Setting{Name: "service_objective", Value: st.serviceObjective})
	}
	out = append(out,
		driver.Setting{Name: "authentication", Value: auth},
		driver.Setting{Name: "delayed_durability", Value: st.delayedDurability + was("DELAYED_DURABILITY")},
	)
	if opts.Durability == driver.DurabilityDelayed && opts.DurabilityScope == driver.ScopeTransaction {
		out = append(out, driver.Setting{Name: "commit", Value: "each write in its own transaction, " + commitDelayed})
	}
	out = append(out,
		driver.Setting{Name: "memory_optimized_elevate_to_snapshot", Value: onOff(st.elevateToSnapshot) + was("MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT")},
		driver.Setting{Name: "recovery_model", Value: st.recoveryModel},
		driver.Setting{Name: "read_committed_snapshot", Value: onOff(st.readCommittedSnap)},
		driver.Setting{Name: "snapshot_isolation", Value: st.snapshotIsolation},
		driver.Setting{Name: "compatibility_level", Value: strconv.Itoa(st.compatibility)},
	)
	if opts.TableType != driver.TableDisk {
		buckets := strconv.FormatInt(bucketCount(opts), 10)
		if opts.BucketCount <= 0 {
			buckets += " (default: no bucket count was given)"
		}
		out = append(out, driver.Setting{Name: "bucket_count", Value: buckets})
	}
	return out
}

// bucketSetting is bucket_count as Info reports it once the table's hash
// index has been read back: the count the server uses, which is the one
// asked for rounded up to a power of two, and, for a table this DB
// created with another, the one asked for.
func bucketSetting(table string, used, asked int64, created bool) string {
	v := fmt.Sprintf("%d (read back from sys.hash_indexes for table %s", used, table)
	if created && used != asked {
		v += fmt.Sprintf("; %d was asked for: the server rounds BUCKET_COUNT up to a power of two", asked)
	}
	return v + ")"
}

// bucketCount is the BUCKET_COUNT new memory-optimized tables get: the
// caller's, within SQL Server's limit, or defaultBucketCount when it set
// none.
func bucketCount(opts driver.Options) int64 {
	if opts.BucketCount <= 0 {
		return defaultBucketCount
	}
	return min(opts.BucketCount, maxBucketCount)
}

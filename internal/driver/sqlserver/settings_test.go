package sqlserver

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

func TestPlanChanges(t *testing.T) {
	delayed := func(scope driver.DurabilityScope) driver.Options {
		return driver.Options{Durability: driver.DurabilityDelayed, DurabilityScope: scope}
	}
	memory := func(o driver.Options, tt driver.TableType) driver.Options { o.TableType = tt; return o }
	for _, tc := range []struct {
		name    string
		opts    driver.Options
		current string // DELAYED_DURABILITY found
		elevate bool   // MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT found
		want    []string
	}{
		{"server leaves FORCED", driver.Options{}, "FORCED", false, nil},
		{"server leaves DISABLED, transaction scope", driver.Options{DurabilityScope: driver.ScopeTransaction}, "DISABLED", false, nil},
		{"full from DISABLED", driver.Options{Durability: driver.DurabilityFull}, "DISABLED", false, nil},
		{"full from FORCED", driver.Options{Durability: driver.DurabilityFull}, "FORCED", false, []string{"DELAYED_DURABILITY FORCED→DISABLED"}},
		{"full from ALLOWED", driver.Options{Durability: driver.DurabilityFull}, "ALLOWED", false, []string{"DELAYED_DURABILITY ALLOWED→DISABLED"}},
		{"delayed database from DISABLED", delayed(driver.ScopeDatabase), "DISABLED", false, []string{"DELAYED_DURABILITY DISABLED→FORCED"}},
		{"delayed database from ALLOWED", delayed(driver.ScopeDatabase), "ALLOWED", false, []string{"DELAYED_DURABILITY ALLOWED→FORCED"}},
		{"delayed database already", delayed(driver.ScopeDatabase), "FORCED", false, nil},
		{"delayed transaction from DISABLED", delayed(driver.ScopeTransaction), "DISABLED", false, []string{"DELAYED_DURABILITY DISABLED→ALLOWED"}},
		{"delayed transaction from FORCED", delayed(driver.ScopeTransaction), "FORCED", false, []string{"DELAYED_DURABILITY FORCED→ALLOWED"}},
		{"delayed transaction already", delayed(driver.ScopeTransaction), "ALLOWED", false, nil},
		{"memory needs elevate", memory(driver.Options{}, driver.TableMemory), "DISABLED", false, []string{"MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT OFF→ON"}},
		{"nondurable needs elevate", memory(driver.Options{}, driver.TableNondurable), "DISABLED", false, []string{"MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT OFF→ON"}},
		{"memory, elevate on already", memory(driver.Options{}, driver.TableMemory), "DISABLED", true, nil},
		{"disk leaves elevate", driver.Options{}, "DISABLED", false, nil},
		{"both, durability first", memory(delayed(driver.ScopeDatabase), driver.TableMemory), "DISABLED", false,
			[]string{"DELAYED_DURABILITY DISABLED→FORCED", "MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT OFF→ON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changes, err := planChanges(tc.opts, dbState{database: "bench", delayedDurability: tc.current, elevateToSnapshot: tc.elevate})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range changes {
				got = append(got, c.option+" "+c.from+"→"+c.to)
				if !strings.HasPrefix(c.apply, "ALTER DATABASE CURRENT SET "+c.option+" = "+c.to) {
					t.Errorf("apply %q does not set %s = %s", c.apply, c.option, c.to)
				}
				if !strings.Contains(c.restore, "IF @now = N'"+c.to+"' ALTER DATABASE CURRENT SET "+c.option+" = "+c.from+";") {
					t.Errorf("restore %q does not put %s back to %s while it holds %s", c.restore, c.option, c.from, c.to)
				}
				// Matched by name: on Azure SQL Database DB_ID() need not be
				// sys.databases' database_id.
				if !strings.Contains(c.restore, "WHERE name = DB_NAME()") || strings.Contains(c.restore, "DB_ID()") {
					t.Errorf("restore %q does not find the database by name", c.restore)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("changes = %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := planChanges(driver.Options{Durability: driver.DurabilityFull}, dbState{delayedDurability: "SOMETIMES"}); err == nil {
		t.Error("an unknown DELAYED_DURABILITY value was planned over: Close could not put it back")
	}
}

// TestRestoreOutcome: restore returns the value it found; NULL (no row in
// sys.databases) means dbprobe's FORCED may still be in force, which must
// be reported with the statement that puts it back, not passed over.
func TestRestoreOutcome(t *testing.T) {
	changes, err := planChanges(driver.Options{Durability: driver.DurabilityDelayed}, dbState{database: "bench", delayedDurability: "DISABLED"})
	if err != nil || len(changes) != 1 {
		t.Fatalf("planChanges = %v, %v", changes, err)
	}
	c := changes[0]
	for _, found := range []string{"FORCED", "DISABLED", "ALLOWED"} {
		if err := restoreOutcome(c, sql.NullString{String: found, Valid: true}); err != nil {
			t.Errorf("found %s: %v, want nil (put back, or changed by someone else since)", found, err)
		}
	}
	err = restoreOutcome(c, sql.NullString{})
	want := `sqlserver: could not read DELAYED_DURABILITY of database "bench" to put it back (sys.databases shows no row named DB_NAME()); ` +
		"it may still be FORCED as dbprobe set it: run ALTER DATABASE [bench] SET DELAYED_DURABILITY = DISABLED"
	if err == nil || err.Error() != want {
		t.Errorf("restoreOutcome(NULL) =\n %v\nwant\n %s", err, want)
	}
}

func TestStateQueryMatchesByName(t *testing.T) {
	if !strings.Contains(stateQuery, "FROM sys.databases AS d WHERE d.name = DB_NAME()") || strings.Contains(stateQuery, "DB_ID()") {
		t.Errorf("stateQuery must read sys.databases by name (DB_ID() differs from its database_id on Azure SQL Database):\n%s", stateQuery)
	}
}

func TestPermissionError(t *testing.T) {
	st := dbState{database: "bench", user: "ycsb"}
	changes, err := planChanges(driver.Options{Durability: driver.DurabilityDelayed}, dbState{database: "bench", delayedDurability: "DISABLED"})
	if err != nil || len(changes) != 1 {
		t.Fatalf("planChanges = %v, %v", changes, err)
	}
	e := permissionError(st, changes[0])
	want := `SQL Server database "bench": durability delayed (scope database) needs DELAYED_DURABILITY = FORCED, and changing it needs the ALTER permission on the database, which [ycsb] lacks; ` +
		"GRANT ALTER ON DATABASE::[bench] TO [ycsb], or set the option yourself, or use durability server and table type disk to leave the database as it is"
	if !badinput.Is(e) || e.Error() != want {
		t.Errorf("permissionError =\n %q (bad input %v)\nwant\n %q", e, badinput.Is(e), want)
	}
}

func TestMemorySupport(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   dbState
		want string // "" when supported, else a part of the message
	}{
		{"Azure Business Critical", dbState{engineEdition: engineAzureSQLDatabase, databaseXTP: true, serviceTier: "BusinessCritical"}, ""},
		{"Azure General Purpose", dbState{engineEdition: engineAzureSQLDatabase, database: "bench", serviceObjective: "GP_Gen5_2"},
			`Azure SQL Database "bench" at service objective GP_Gen5_2 has no memory-optimized tables (table type memory); they need the Premium or Business Critical tier`},
		{"Azure Hyperscale", dbState{engineEdition: engineAzureSQLDatabase, databaseXTP: true, database: "bench", serviceObjective: "HS_Gen5_4", serviceTier: "Hyperscale"},
			`Azure SQL Database "bench" (Hyperscale, service objective HS_Gen5_4) has no memory-optimized tables (table type memory); the Hyperscale tier supports none: use table type disk, or a Premium or Business Critical database`},
		{"Azure without a filegroup view", dbState{engineEdition: engineAzureSQLDatabase, databaseXTP: true, memoryFilegroups: 0}, ""},
		{"Managed Instance General Purpose", dbState{engineEdition: engineManagedInstance, serverXTP: true, database: "bench"},
			`Azure SQL Managed Instance database "bench" has no memory-optimized tables (table type memory); only the Business Critical tier of Managed Instance supports them: use a Business Critical instance, or table type disk`},
		{"Managed Instance Business Critical", dbState{engineEdition: engineManagedInstance, databaseXTP: true, memoryFilegroups: 1, memoryFilegroup: "XTP", memoryFiles: 1}, ""},
		{"Managed Instance Business Critical without a file", dbState{engineEdition: engineManagedInstance, databaseXTP: true, database: "bench", memoryFilegroups: 1, memoryFilegroup: "XTP"},
			`Azure SQL Managed Instance database "bench" has no file in its MEMORY_OPTIMIZED_DATA filegroup [XTP], which memory-optimized tables (table type memory) need (CREATE TABLE would fail with error 41337); add one (ALTER DATABASE [bench] ADD FILE (NAME = 'dbprobe_mod') TO FILEGROUP [XTP]) or use table type disk`},
		{"SQL Server with a filegroup and a file", dbState{engineEdition: 3, serverXTP: true, memoryFilegroups: 1, memoryFilegroup: "mod", memoryFiles: 1}, ""},
		{"SQL Server without a filegroup", dbState{engineEdition: 3, serverXTP: true, database: "bench"},
			`SQL Server database "bench" has no MEMORY_OPTIMIZED_DATA filegroup, which memory-optimized tables (table type memory) need; add one (ALTER DATABASE [bench] ADD FILEGROUP`},
		{"SQL Server with a filegroup and no file", dbState{engineEdition: 3, serverXTP: true, database: "bench", memoryFilegroups: 1, memoryFilegroup: "mod"},
			`SQL Server database "bench" has no file in its MEMORY_OPTIMIZED_DATA filegroup [mod], which memory-optimized tables (table type memory) need (CREATE TABLE would fail with error 41337); add one (ALTER DATABASE [bench] ADD FILE (NAME = 'dbprobe_mod', FILENAME = '<a directory of the server>/dbprobe_mod') TO FILEGROUP [mod]) or use table type disk`},
		{"SQL Server without In-Memory OLTP", dbState{engineEdition: 4, edition: "Express Edition (64-bit)", database: "bench", memoryFilegroups: 1, memoryFiles: 1},
			`SQL Server Express Edition (64-bit) (database "bench") has no memory-optimized tables (table type memory); SERVERPROPERTY('IsXTPSupported') is 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := memorySupport(tc.st, driver.TableMemory)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("memorySupport = %v, want supported", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Errorf("memorySupport = %v, want a message starting %q", err, tc.want)
			case err != nil && (!badinput.Is(err) || !strings.Contains(err.Error(), "table type disk")):
				t.Errorf("memorySupport = %v: want bad input that names the way out (table type disk)", err)
			}
		})
	}
}

func TestServerVersion(t *testing.T) {
	onPrem := "Microsoft SQL Server 2022 (RTM-CU15) (KB5041321) - 16.0.4145.4 (X64) \n\tJul 16 2024 12:00:00 \n\tCopyright (C) 2022 Microsoft Corporation\n\tDeveloper Edition (64-bit) on Linux (Ubuntu 22.04.4 LTS) <X64>"
	azure := "Microsoft SQL Azure (RTM) - 12.0.2000.8 \n\tSep 18 2024 10:49:56 \n\tCopyright (C) 2022 Microsoft Corporation\n"
	for _, tc := range []struct {
		version string
		edition int
		want    string
	}{
		{onPrem, 3, "Microsoft SQL Server 2022 (RTM-CU15) (KB5041321) - 16.0.4145.4 (X64)"},
		{azure, engineAzureSQLDatabase, "Azure SQL Database (Microsoft SQL Azure (RTM) - 12.0.2000.8)"},
		{azure, 8, "Microsoft SQL Azure (RTM) - 12.0.2000.8"}, // Managed Instance
		{"one line", 2, "one line"},
	} {
		if got := serverVersion(tc.version, tc.edition); got != tc.want {
			t.Errorf("serverVersion(…, %d) = %q, want %q", tc.edition, got, tc.want)
		}
	}
}

func TestTableType(t *testing.T) {
	for _, tc := range []struct {
		memory      bool
		durability  string
		index       string
		buckets     int64
		wantType    driver.TableType
		wantStorage string
	}{
		{false, "SCHEMA_AND_DATA", "CLUSTERED", 0, driver.TableDisk, "disk-based, CLUSTERED"},
		{false, "SCHEMA_AND_DATA", "HEAP", 0, driver.TableDisk, "disk-based, HEAP"},
		{true, "SCHEMA_AND_DATA", "", 1 << 20, driver.TableMemory, "MEMORY_OPTIMIZED = ON, DURABILITY = SCHEMA_AND_DATA, hash BUCKET_COUNT = 1048576"},
		{true, "SCHEMA_ONLY", "", 64, driver.TableNondurable, "MEMORY_OPTIMIZED = ON, DURABILITY = SCHEMA_ONLY, hash BUCKET_COUNT = 64"},
		{true, "SCHEMA_ONLY", "", 0, driver.TableNondurable, "MEMORY_OPTIMIZED = ON, DURABILITY = SCHEMA_ONLY"},
	} {
		tt, storage := tableType(tc.memory, tc.durability, tc.index, tc.buckets)
		if tt != tc.wantType || storage != tc.wantStorage {
			t.Errorf("tableType(%v, %s, %s, %d) = %v, %q; want %v, %q", tc.memory, tc.durability, tc.index, tc.buckets, tt, storage, tc.wantType, tc.wantStorage)
		}
	}
}

func TestSettings(t *testing.T) {
	st := dbState{database: "bench", schema: "dbo", edition: "Developer Edition (64-bit)", delayedDurability: "ALLOWED",
		elevateToSnapshot: true, recoveryModel: "FULL", compatibility: 160, snapshotIsolation: "OFF"}
	opts := driver.Options{Durability: driver.DurabilityDelayed, DurabilityScope: driver.ScopeTransaction, TableType: driver.TableMemory}
	applied, err := planChanges(opts, dbState{delayedDurability: "DISABLED"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range settings(st, opts, applied, "SQL Server login [sa]") {
		got[s.Name] = s.Value
	}
	for name, want := range map[string]string{
		"database":                             "bench",
		"delayed_durability":                   "ALLOWED (set by dbprobe, was DISABLED; put back at exit)",
		"memory_optimized_elevate_to_snapshot": "ON (set by dbprobe, was OFF; put back at exit)",
		"commit":                               "each write in its own transaction, COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON)",
		"bucket_count":                         "1048576 (default: no bucket count was given)",
		"recovery_model":                       "FULL",
		"compatibility_level":                  "160",
		"authentication":                       "SQL Server login [sa]",
	} {
		if got[name] != want {
			t.Errorf("setting %s = %q, want %q", name, got[name], want)
		}
	}
	if _, ok := got["service_objective"]; ok {
		t.Errorf("service_objective reported off Azure")
	}

	// Nothing changed: values as read, no note; a bucket count given is shown as is.
	opts = driver.Options{TableType: driver.TableNondurable, BucketCount: 4096}
	got = map[string]string{}
	for _, s := range settings(st, opts, nil, "x") {
		got[s.Name] = s.Value
	}
	if got["delayed_durability"] != "ALLOWED" || got["bucket_count"] != "4096" || got["commit"] != "" {
		t.Errorf("settings without changes = %v", got)
	}
}

func TestCheckApplied(t *testing.T) {
	changes, err := planChanges(driver.Options{Durability: driver.DurabilityDelayed, TableType: driver.TableMemory}, dbState{delayedDurability: "DISABLED"})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkApplied(dbState{delayedDurability: "FORCED", elevateToSnapshot: true}, changes); err != nil {
		t.Errorf("checkApplied of what was set: %v", err)
	}
	if err := checkApplied(dbState{database: "bench", delayedDurability: "DISABLED", elevateToSnapshot: true}, changes); err == nil ||
		!strings.Contains(err.Error(), "DELAYED_DURABILITY = DISABLED after dbprobe set it to FORCED") {
		t.Errorf("checkApplied of a value the server did not take = %v", err)
	}
	if err := checkApplied(dbState{delayedDurability: "FORCED"}, changes); err == nil {
		t.Errorf("checkApplied missed MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT still OFF")
	}
}

func TestBucketCount(t *testing.T) {
	for in, want := range map[int64]int64{0: 1 << 20, -5: 1 << 20, 1000: 1000, 1 << 30: 1 << 30, 1 << 31: 1 << 30} {
		if got := bucketCount(driver.Options{BucketCount: in}); got != want {
			t.Errorf("bucketCount(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestBucketSetting(t *testing.T) {
	for _, tc := range []struct {
		used, asked int64
		created     bool
		want        string
	}{
		{1024, 1000, true, "1024 (read back from sys.hash_indexes for table usertable; 1000 was asked for: the server rounds BUCKET_COUNT up to a power of two)"},
		{1 << 20, 1 << 20, true, "1048576 (read back from sys.hash_indexes for table usertable)"},
		{1024, 1 << 20, false, "1024 (read back from sys.hash_indexes for table usertable)"}, // a table loaded earlier
	} {
		if got := bucketSetting("usertable", tc.used, tc.asked, tc.created); got != tc.want {
			t.Errorf("bucketSetting(%d, %d, %v) = %q, want %q", tc.used, tc.asked, tc.created, got, tc.want)
		}
	}
	// Info shows it in place of the count asked for, and hands out a copy.
	db := &DB{opts: driver.Options{TableType: driver.TableMemory, BucketCount: 1000}, created: map[string]bool{"usertable": true},
		info: driver.Info{Settings: []driver.Setting{{Name: "database", Value: "bench"}, {Name: "bucket_count", Value: "1000"}}}}
	db.noteBuckets("usertable", 1024)
	info := db.Info()
	if len(info.Settings) != 2 || !strings.HasPrefix(info.Settings[1].Value, "1024 (read back") {
		t.Errorf("Info().Settings = %v", info.Settings)
	}
	info.Settings[1].Value = "changed"
	if db.Info().Settings[1].Value == "changed" {
		t.Error("Info hands out its own settings slice")
	}
}

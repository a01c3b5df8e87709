package sqlserver

import (
	"context"
	"database/sql"

	"slices"
	"strings"
	"testing"

	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

// TestRecompileAfterLoad: on the procedure path of a memory-optimized
// table, the last session to close after rows were inserted marks the
// natively compiled procedures for recompilation, once; a session that
// inserted nothing, or a disk table, does not.
func TestRecompileAfterLoad(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tt     dbdriver.TableType
		insert bool
		want   int // recompilations seen
	}{
		{"memory, loaded", dbdriver.TableMemory, true, 1},
		{"memory, nothing inserted", dbdriver.TableMemory, false, 0},
		{"disk, loaded", dbdriver.TableDisk, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeServer(t)
			f.answerBatch = func(text string) []byte {
				if strings.HasPrefix(text, "SELECT COUNT(*) FROM (VALUES") {
					return intRow(5) // every procedure exists
				}
				return nil
			}
			db := f.db(dbdriver.Options{Sessions: 2, TableType: tc.tt, OpPath: dbdriver.PathProcedure})
			ctx := context.Background()
			tbl := testTable(2)
			a, err := db.Session(ctx, tbl)
			if err != nil {
				t.Fatal(err)
			}
			b, err := db.Session(ctx, tbl)
			if err != nil {
				t.Fatal(err)
			}
			if tc.insert {
				if err := a.InsertBatch(ctx, [][]byte{[]byte("user1")}, [][][]byte{{[]byte("a"), []byte("b")}}); err != nil {
					t.Fatal(err)
				}
			}
			recompiles := func() int {
				return len(slices.DeleteFunc(f.batchesSeen(), func(s string) bool { return !strings.Contains(s, "sp_recompile") }))
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if n := recompiles(); n != 0 {
				t.Fatalf("%d recompilations while a session is still open", n)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if n := recompiles(); n != tc.want {
				t.Errorf("%d recompilations, want %d", n, tc.want)
			}
			if tc.want > 0 {
				want := newDialect("dbo", tbl).recompileProcedures()
				if !slices.Contains(f.batchesSeen(), want) {
					t.Errorf("the recompilation sent is not %q", want)
				}
			}
		})
	}

}

// TestSessionSettings reads the session options the header reports from
// constructed answers of sessionQuery.
func TestSessionSettings(t *testing.T) {
	st := dbState{readCommittedSnap: true, elevateToSnapshot: true}
	for _, tc := range []struct {
		name string
		ss   sessionState
		st   dbState
		opts dbdriver.Options
		want map[string]string
	}{
		{"driver defaults, Azure SQL Database (RCSI on)", sessionState{isolation: sql.NullInt64{Int64: 2, Valid: true}, options: 5176, lockTimeout: -1, deadlockPriority: sql.NullInt64{Valid: true}},
			st, dbdriver.Options{}, map[string]string{
				"isolation_level":   "READ COMMITTED, reading row versions (READ_COMMITTED_SNAPSHOT ON)",
				"autocommit":        "on (IMPLICIT_TRANSACTIONS OFF)",
				"xact_abort":        "OFF",
				"lock_timeout":      "-1 (lock waits have no limit)",
				"nocount":           "OFF",
				"arithabort":        "OFF",
				"deadlock_priority": "0 (NORMAL)",
			}},
		{"changed by the login's defaults, memory tables", sessionState{isolation: sql.NullInt64{Int64: 4, Valid: true},
			options: optImplicitTransactions | optXactAbort | optNoCount | optArithAbort, lockTimeout: 5000, deadlockPriority: sql.NullInt64{Int64: -5, Valid: true}},
			st, dbdriver.Options{TableType: dbdriver.TableMemory}, map[string]string{
				"isolation_level":   "SERIALIZABLE; SNAPSHOT on memory-optimized tables (MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT ON)",
				"autocommit":        "off: IMPLICIT_TRANSACTIONS ON, each write stays in an open transaction until a COMMIT",
				"xact_abort":        "ON",
				"lock_timeout":      "5000 ms (a longer lock wait fails with error 1222)",
				"nocount":           "ON",
				"arithabort":        "ON",
				"deadlock_priority": "-5 (LOW)",
			}},
		{"box product, RCSI off, view refused", sessionState{options: 0, lockTimeout: -1},
			dbState{}, dbdriver.Options{}, map[string]string{
				"isolation_level":   "not readable (sys.dm_exec_sessions refused)",
				"deadlock_priority": "not readable",
			}},
		{"READ COMMITTED with locks", sessionState{isolation: sql.NullInt64{Int64: 2, Valid: true}}, dbState{}, dbdriver.Options{},
			map[string]string{"isolation_level": "READ COMMITTED, with shared locks (READ_COMMITTED_SNAPSHOT OFF)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for _, s := range sessionSettings(tc.ss, tc.st, tc.opts) {
				got[s.Name] = s.Value
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// TestReadSession reads the options from the fake server, and without
// sys.dm_exec_sessions when the login may not read it.
func TestReadSession(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	for _, refuse := range []bool{false, true} {
		f := newFakeServer(t)
		f.answerBatch = func(text string) []byte {
			switch {
			case text == sessionQuery && refuse:
				return errorDone(300, "VIEW SERVER STATE permission was denied on object 'server', database 'master'.")
			case text == sessionQuery:
				return intsRow(i32(5), i32(5176), i32(-1), i32(0))
			case text == sessionQueryNoDMV:
				return intsRow(nil, i32(5176), i32(2000), nil)
			}
			return nil
		}
		db := f.db(dbdriver.Options{})
		ss, err := readSession(context.Background(), db.pool)
		if err != nil {
			t.Fatalf("refuse=%v: %v", refuse, err)
		}
		want := sessionState{isolation: sql.NullInt64{Int64: 5, Valid: true}, options: 5176, lockTimeout: -1, deadlockPriority: sql.NullInt64{Valid: true}}
		if refuse {
			want = sessionState{options: 5176, lockTimeout: 2000}
		}
		if ss != want {
			t.Errorf("refuse=%v: %+v, want %+v", refuse, ss, want)
		}
	}
}

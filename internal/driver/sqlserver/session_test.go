package sqlserver

import (
	"context"

	"slices"
	"strings"
	"testing"

	dbdriver "dbprobe/internal/driver"
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

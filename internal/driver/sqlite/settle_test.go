package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// Settle leaves nothing of a fill in the WAL: what the fill appended is
// copied into the database file and the WAL emptied, so that no
// checkpoint of the fill's pages runs inside the measured part.
func TestSettleEmptiesTheWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	db := openURL(t, "sqlite://"+path, driver.Options{Sessions: 1})
	defer db.Close()
	ctx := context.Background()
	tbl := driver.DataTable{Name: "filled", PayloadBytes: 2000}
	f := db.(driver.TableFiller)
	if err := f.CreateDataTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if _, err := f.FillTable(ctx, tbl, 1, 5000); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path + "-wal"); err != nil || st.Size() == 0 {
		t.Fatalf("the fill left no WAL to settle (%v)", err)
	}
	how, err := db.(driver.Settler).Settle(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path + "-wal"); err == nil && st.Size() != 0 {
		t.Errorf("the WAL holds %d bytes after Settle: %s", st.Size(), how)
	}
	if !strings.HasPrefix(how, "PRAGMA wal_checkpoint(TRUNCATE) (the WAL's ") || !strings.Contains(how, "the database file synced") {
		t.Errorf("Settle says %q", how)
	}
}

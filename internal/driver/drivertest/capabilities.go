package drivertest

import (
	"context"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// testCapabilities checks that the DB's description of its capabilities
// matches its interfaces, and, where it has them, that a data table goes
// through its life the same way on every database: created as dbprobe's,
// filled on the server, sized, scanned in slices that add up, written
// into by INSERT … SELECT, and dropped.
func testCapabilities(t *testing.T, db driver.DB, suffix string) {
	if err := driver.CheckDescription(db); err != nil {
		t.Fatal(err)
	}
	caps := driver.Describe(db)
	if err := caps.Need(driver.CapFill, driver.CapScan, driver.CapSize, driver.CapInsertSelect); err != nil {
		if !badinput.Is(err) {
			t.Errorf("Need: %v is not bad input", err)
		}
		t.Skipf("no data tables: %v", err)
	}
	ctx := context.Background()
	filler := db.(driver.TableFiller)
	const rows, payload = 1000, 300
	src := driver.DataTable{Name: "dbprobe_data_" + suffix, PayloadBytes: payload}
	dst := driver.DataTable{Name: "dbprobe_data_" + suffix + "_dst", PayloadBytes: payload}
	for _, tbl := range []driver.DataTable{src, dst} {
		if err := filler.CreateDataTable(ctx, tbl); err != nil {
			t.Fatalf("CreateDataTable(%s): %v", tbl.Name, err)
		}
		defer func() {
			if err := filler.DropDataTable(ctx, tbl); err != nil {
				t.Errorf("DropDataTable(%s): %v", tbl.Name, err)
			}
		}()
		st, err := db.Inspect(ctx, tbl.Table())
		if err != nil || !st.Exists || !st.CreatedByDbprobe {
			t.Fatalf("Inspect(%s) = %+v, %v; want a table of dbprobe's", tbl.Name, st, err)
		}
	}
	if n, err := filler.FillTable(ctx, src, 1, rows); err != nil || n != rows {
		t.Fatalf("FillTable = %d, %v; want %d", n, err, rows)
	}
	size, err := db.(driver.TableSizer).TableSize(ctx, src)
	if err != nil || size.Bytes < rows*payload || size.How == "" {
		t.Errorf("TableSize = %+v, %v; want at least the %d bytes of payload, and how", size, err, rows*payload)
	}
	var sum driver.ScanResult
	for part := range 4 {
		r, err := db.(driver.TableScanner).ScanTable(ctx, src, part, 4)
		if err != nil {
			t.Fatalf("ScanTable(%d of 4): %v", part, err)
		}
		sum.Rows += r.Rows
		sum.PayloadBytes += r.PayloadBytes
	}
	if want := (driver.ScanResult{Rows: rows, PayloadBytes: rows * payload}); sum != want {
		t.Errorf("the four slices read %+v, want %+v", sum, want)
	}
	if n, err := db.(driver.ChunkWriter).InsertSelect(ctx, src, dst, 1, 250, 5000); err != nil || n != 250 {
		t.Fatalf("InsertSelect = %d, %v; want 250", n, err)
	}
	r, err := db.(driver.TableScanner).ScanTable(ctx, dst, 0, 1)
	if err != nil || r.Rows != 250 {
		t.Errorf("the chunk's table holds %+v, %v; want 250 rows", r, err)
	}
	if _, err := filler.FillTable(ctx, dst, 5001, 5001); err == nil {
		t.Error("FillTable over an id InsertSelect wrote: no error for the duplicate key")
	}
}

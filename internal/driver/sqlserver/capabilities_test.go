package sqlserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

func TestCapabilitiesDescribeTheDriver(t *testing.T) {
	if err := driver.CheckDescription(&DB{}); err != nil {
		t.Fatal(err)
	}
}

// TestDataTablesAgainstServer takes a data table through its life on a
// real server (DBPROBE_SQLSERVER_URL), as the other drivers' tests do on
// theirs, and stops a statement by its context.
func TestDataTablesAgainstServer(t *testing.T) {
	u := testdb.SQLServerURL(t)
	for _, bulk := range []bool{true, false} {
		t.Run(fmt.Sprintf("bulk=%v", bulk), func(t *testing.T) {
			defer func(was int64) { fillChunkBytes = was }(fillChunkBytes)
			fillChunkBytes = 1 << 20
			target, err := driver.ParseTarget(u, "")
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			d, err := Driver{}.Open(ctx, target, driver.Options{Sessions: 2, BulkLoad: bulk})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			db := d.(*DB)
			suffix := fmt.Sprint(time.Now().UnixNano())
			src := driver.DataTable{Name: "dbprobe_src_" + suffix, PayloadBytes: 500}
			cp := driver.DataTable{Name: "dbprobe_copy_" + suffix, PayloadBytes: 500}
			for _, tbl := range []driver.DataTable{src, cp} {
				defer db.DropDataTable(context.Background(), tbl)
			}
			if err := db.CreateDataTable(ctx, src); err != nil {
				t.Fatal(err)
			}
			rows := chunkRows(src)*2 + 3
			if n, err := db.FillTable(ctx, src, 1, rows); err != nil || n != rows {
				t.Fatalf("FillTable = %d, %v", n, err)
			}
			if size, err := db.TableSize(ctx, src); err != nil || size.Bytes < rows*500 {
				t.Errorf("TableSize = %+v, %v", size, err)
			}
			var total driver.ScanResult
			for part := range 3 {
				r, err := db.ScanTable(ctx, src, part, 3)
				if err != nil {
					t.Fatal(err)
				}
				total.Rows += r.Rows
				total.PayloadBytes += r.PayloadBytes
			}
			if want := (driver.ScanResult{Rows: rows, PayloadBytes: rows * 500}); total != want {
				t.Errorf("slices add up to %+v, want %+v", total, want)
			}
			if res, err := db.CopyTable(ctx, src, cp, 2); err != nil || res.Rows != rows {
				t.Fatalf("CopyTable = %+v, %v", res, err)
			}
			if n, err := db.InsertSelect(ctx, src, cp, 1, 100, rows); err != nil || n != 100 {
				t.Errorf("InsertSelect = %d, %v", n, err)
			}
			bw, err := db.BulkWriter(ctx, cp)
			if err != nil {
				t.Fatal(err)
			}
			ids := []int64{rows * 3, rows*3 + 1}
			if err := bw.Write(ctx, ids, [][]byte{make([]byte, 500), make([]byte, 500)}); err != nil {
				t.Errorf("Write (%s): %v", bw.How(), err)
			}
			bw.Close()
			if r, err := db.ScanTable(ctx, cp, 0, 1); err != nil || r.Rows != rows+102 {
				t.Errorf("the copy holds %+v, %v; want %d rows", r, err, rows+102)
			}

			c, err := db.SQLConn(ctx, driver.SQLOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			wait, err := c.Prepare(ctx, "WAITFOR DELAY :delay")
			if err != nil {
				t.Fatal(err)
			}
			cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			start := time.Now()
			_, err = c.Run(cctx, wait, []any{"00:00:30"}, nil)
			cancel()
			if err == nil || time.Since(start) > 5*time.Second {
				t.Errorf("WAITFOR under a 300 ms context: %v after %v", err, time.Since(start))
			}
			one, err := c.Prepare(ctx, "SELECT 1")
			if err != nil {
				t.Fatal(err)
			}
			if out, err := c.Run(ctx, one, nil, nil); err != nil || out.Rows != 1 {
				t.Errorf("the connection after the attention: %+v, %v", out, err)
			}
		})
	}
}

// A filegroup goes in the server's default data directory, holds a table,
// and goes again; Azure SQL Database refuses with one line.
func TestPlacementAgainstServer(t *testing.T) {
	u := testdb.SQLServerURL(t)
	target, err := driver.ParseTarget(u, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := Driver{}.Open(ctx, target, driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	db := d.(*DB)
	var dir string
	if err := db.pool.QueryRowContext(ctx, "SELECT CAST(ISNULL(SERVERPROPERTY('InstanceDefaultDataPath'), '') AS nvarchar(4000))").Scan(&dir); err != nil {
		t.Fatal(err)
	}
	loc, err := db.CreateLocation(ctx, dir)
	if badinput.Is(err) {
		t.Skipf("no filegroup here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	tbl := driver.DataTable{Name: fmt.Sprintf("dbprobe_placed_%d", time.Now().UnixNano()), PayloadBytes: 100, Where: &loc}
	if err := db.CreateDataTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if err := db.DropLocation(ctx, loc); err == nil {
		t.Error("a filegroup holding a table was removed")
	}
	if err := db.DropDataTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if err := db.DropLocation(ctx, loc); err != nil {
		t.Fatal(err)
	}
	if err := db.DropLocation(ctx, driver.Location{Name: "PRIMARY"}); !badinput.Is(err) {
		t.Errorf("removing a filegroup dbprobe did not make: %v", err)
	}
}

func TestFileName(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{"/var/opt/mssql/data/", "/var/opt/mssql/data/fg.ndf"},
		{"/data", "/data/fg.ndf"},
		{`D:\data\`, `D:\data\fg.ndf`},
		{`D:\data`, `D:\data\fg.ndf`},
	} {
		if got := fileName(tc.dir, "fg"); got != tc.want {
			t.Errorf("fileName(%q) = %q, want %q", tc.dir, got, tc.want)
		}
	}
}

package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// A sort that spills writes its temporary file into the Location's
// tablespace on a connection set up by TempSetup, and into the default
// place on one that is not. A cursor keeps the sorted file open while
// pg_ls_tmpdir looks.
func TestTempPlacement(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	dir, loc := serverLocation(t, db)
	t.Cleanup(func() {
		if err := db.DropLocation(context.Background(), loc); err != nil {
			t.Errorf("DropLocation: %v", err)
		}
	})
	setup, err := db.TempSetup(loc)
	if err != nil {
		t.Fatal(err)
	}
	if want := `SET temp_tablespaces = "` + loc.Name + `"`; len(setup) != 1 || setup[0] != want {
		t.Errorf("TempSetup = %q, want %q", setup, want)
	}
	inPlace := func(placed bool) (inLocation, elsewhere int64) {
		t.Helper()
		o := driver.SQLOptions{Setup: []string{"SET work_mem = '64kB'"}}
		if placed {
			o.Setup = append(setup, o.Setup...)
		}
		c, err := db.SQLConn(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		defer c.Rollback(ctx)
		for _, text := range []string{
			"DECLARE spill CURSOR FOR SELECT g FROM generate_series(1, :n) g ORDER BY md5(g::text)",
			"FETCH 1 FROM spill",
		} {
			st, err := c.Prepare(ctx, text)
			if err != nil {
				t.Fatal(err)
			}
			args := []any{}
			if len(st.Params()) == 1 {
				args = []any{int64(200000)}
			}
			if _, err := c.Run(ctx, st, args, nil); err != nil {
				t.Fatalf("%s: %v", text, err)
			}
		}
		inLocation = count(t, admin, "SELECT count(*) FROM pg_ls_tmpdir((SELECT oid FROM pg_tablespace WHERE spcname = $1))", loc.Name)
		elsewhere = count(t, admin, "SELECT count(*) FROM pg_ls_tmpdir()")
		return inLocation, elsewhere
	}
	if in, out := inPlace(false); in != 0 || out == 0 {
		t.Fatalf("without TempSetup: %d temporary files in the tablespace, %d in the default place; want 0 and some", in, out)
	}
	if in, out := inPlace(true); in == 0 || out != 0 {
		t.Fatalf("with TempSetup: %d temporary files in the tablespace, %d in the default place; want some and 0", in, out)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "PG_*", "pgsql_tmp")); len(tmp) != 1 {
		t.Errorf("no pgsql_tmp directory under %s: %q", dir, tmp)
	}
	if _, err := db.TempSetup(driver.Location{}); err == nil {
		t.Error("TempSetup of a Location without a tablespace")
	}
}

// TablePath is the table's main file: under data_directory for a table
// in pg_default, under the tablespace's directory for one in a Location;
// for a user who may not read data_directory it is an error that says so.
func TestTablePath(t *testing.T) {
	db, admin := capDB(t)
	ctx := context.Background()
	tbl := driver.DataTable{Name: "located", PayloadBytes: 100}
	if err := db.CreateDataTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FillTable(ctx, tbl, 1, 100); err != nil {
		t.Fatal(err)
	}
	got, err := db.TablePath(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	var dataDir, rel string
	if err := admin.QueryRow(ctx, "SELECT current_setting('data_directory'), pg_relation_filepath('located')").Scan(&dataDir, &rel); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dataDir, rel); got != want {
		t.Errorf("TablePath = %s, want %s", got, want)
	}
	checkFile(t, got)

	dir, loc := serverLocation(t, db)
	placed := driver.DataTable{Name: "placed_located", PayloadBytes: 100, Where: &loc}
	if err := db.CreateDataTable(ctx, placed); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.DropDataTable(context.Background(), placed)
		db.DropLocation(context.Background(), loc)
	})
	if _, err := db.FillTable(ctx, placed, 1, 100); err != nil {
		t.Fatal(err)
	}
	got, err = db.TablePath(ctx, placed)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, dir+"/PG_") || !filepath.IsAbs(got) {
		t.Errorf("TablePath of a table in %s = %s", dir, got)
	}
	checkFile(t, got)

	if _, err := db.TablePath(ctx, driver.DataTable{Name: "none", PayloadBytes: 1}); err == nil {
		t.Error("TablePath of no table")
	}

	// A user without pg_read_all_settings: the tablespace's path, which
	// anyone may read, but not the data directory's.
	weak := weakDB(t, admin)
	if got, err := weak.TablePath(ctx, placed); err != nil || !strings.HasPrefix(got, dir+"/PG_") {
		t.Errorf("TablePath of a table in a tablespace for a user who cannot read data_directory: %s, %v", got, err)
	}
	if _, err := weak.TablePath(ctx, tbl); err == nil || !strings.Contains(err.Error(), "pg_read_all_settings") || !strings.Contains(err.Error(), rel) {
		t.Errorf("TablePath under data_directory for a user who cannot read it: %v", err)
	}
}

// checkFile checks that path is a file with the table's 100 rows in it,
// where the test may look (as root; the data directory is the server's
// user's alone).
func checkFile(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < 8192 {
		t.Errorf("%s: %v, %v", path, fi, err)
	}
}

// weakDB opens a DB as a new login role that holds no privilege beyond
// connecting: no superuser, no pg_read_all_settings.
func weakDB(t *testing.T, admin *pgx.Conn) *DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	role := "dbprobe_weak_" + hex.EncodeToString(rnd[:])
	password := "pw-" + hex.EncodeToString(rnd[:3])
	if _, err := admin.Exec(ctx, "CREATE ROLE "+role+" LOGIN PASSWORD '"+password+"'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Registered after the database's cleanup, so it runs first;
		// the DB's own cleanup, registered later, closes its connections
		// before.
		if _, err := admin.Exec(context.Background(), "DROP ROLE IF EXISTS "+role); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	u, err := url.Parse(admin.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, password)
	target, err := driver.ParseTarget(u.String(), "")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Driver{}.Open(ctx, target, driver.Options{Sessions: 1})
	if err != nil {
		t.Fatalf("Open as %s: %v", role, err)
	}
	t.Cleanup(func() { d.Close() })
	return d.(*DB)
}

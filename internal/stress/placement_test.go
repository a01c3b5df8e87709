package stress

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// serverDir makes a directory under parent ("" for the test's temporary
// one) that a server on this host, running as OS user owner (postgres,
// mysql), may take for a tablespace or DATA DIRECTORY: dbprobe's tests
// run as root here and give it away; as another user, the server runs as
// that user (scripts/with-databases) and the directory is already its own.
func serverDir(t *testing.T, parent, owner string) string {
	t.Helper()
	var dir string
	if parent == "" {
		dir = t.TempDir()
	} else {
		var err error
		if dir, err = os.MkdirTemp(parent, "dbprobe-test-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	if os.Geteuid() == 0 {
		pg, err := user.Lookup(owner)
		if err != nil {
			testdb.Unavailable(t, "running as root without a "+owner+" OS user to give the directory to")
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		for _, d := range []string{filepath.Dir(dir), dir} {
			os.Chmod(d, 0o755)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fsText is how the header names the file system that holds dir.
func fsText(t *testing.T, dir string) string {
	t.Helper()
	fs, err := experiment.FileSystemOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(", on %s (%s, mounted at %s;", fs.Device, fs.Type, fs.Mount)
}

// placementRun runs the mix with --placement dir and returns the text;
// a server that cannot use the directory skips the test (fails in CI).
func placementRun(t *testing.T, url, dir string) string {
	t.Helper()
	var out bytes.Buffer
	c := mixRun(url, &out, 300, 2, 24)
	c.Placement = dir
	if err := Run(context.Background(), c); err != nil {
		if badinput.Is(err) && (strings.Contains(err.Error(), "tablespace") || strings.Contains(err.Error(), "DATA DIRECTORY") || strings.Contains(err.Error(), "table's file")) {
			testdb.Unavailable(t, fmt.Sprintf("the server cannot use a directory of this test: %v", err))
		}
		t.Fatalf("%v\n%s", err, out.String())
	}
	return out.String()
}

// The same mix placed on two directories — on two file systems where the
// host has a tmpfs at /dev/shm — runs the same statements, and the
// header names each directory, the table's file in it and that file
// system; the table and PostgreSQL's tablespaces are gone at the end.
func TestPlacementTwoDirectories(t *testing.T) {
	for _, d := range []struct {
		name, owner string
		url         func(t *testing.T) string
	}{
		{"postgres", "postgres", func(t *testing.T) string { return testdb.FreshPostgresDatabase(t) }},
		{"mariadb", "mysql", func(t *testing.T) string { return testdb.FreshMySQLDatabase(t) }},
	} {
		t.Run(d.name, func(t *testing.T) {
			url := d.url(t)
			dirs := []string{serverDir(t, "", d.owner)}
			if fs, err := experiment.FileSystemOf("/dev/shm"); err == nil && fs.Type == "tmpfs" {
				dirs = append(dirs, serverDir(t, "/dev/shm", d.owner))
			} else {
				dirs = append(dirs, serverDir(t, "", d.owner))
			}
			want := expect(300, 2, 24)
			for _, dir := range dirs {
				text := placementRun(t, url, dir)
				for _, w := range []string{
					"# note: where: table dbprobe_oltp is in ",
					"is in ", " " + dir, ", file " + dir + "/",
					fsText(t, dir),
					fmt.Sprintf("[OLTP-DELETE], RowsAffected, %d\n", want.hits["DELETE"]),
					fmt.Sprintf("[OLTP-SELECT], RowsReturned, %d\n", want.hits["SELECT"]),
				} {
					if !strings.Contains(text, w) {
						t.Errorf("--placement %s: output lacks %q:\n%s", dir, w, text)
					}
				}
				if st := tableExists(t, url); st.Exists {
					t.Errorf("--placement %s: the table is left", dir)
				}
				if d.name != "postgres" {
					continue
				}
				if n := query(t, url, "SELECT COUNT(*) FROM pg_tablespace WHERE spcname LIKE 'dbprobe_ts_%'"); n != 0 {
					t.Errorf("--placement %s: %d tablespaces of dbprobe's are left", dir, n)
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Errorf("--placement %s: the server left %d entries in it", dir, len(entries))
				}
			}
		})
	}
}

// --placement-temp sends the temporary files of a sort that spills to the
// directory: a function, while its cursor holds a spilled sort open,
// counts the temporary files in the tablespace dbprobe made there, and
// returns a row for each.
func TestPlacementTempPostgres(t *testing.T) {
	url := testdb.FreshPostgresDatabase(t)
	dir := serverDir(t, "", "postgres")
	files := writeFiles(t, map[string]string{
		"setup.sql": `CREATE FUNCTION spill_files() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE c refcursor; v int; n bigint;
BEGIN
	SET LOCAL work_mem = '64kB';
	OPEN c FOR SELECT g FROM generate_series(1, 100000) g ORDER BY md5(g::text);
	FETCH c INTO v;
	SELECT count(*) INTO n FROM pg_ls_tmpdir((SELECT oid FROM pg_tablespace WHERE spcname LIKE 'dbprobe_ts_%'));
	CLOSE c;
	RETURN n;
END $$;
`,
		"spill.sql": "SELECT g FROM generate_series(1, spill_files()) g;\n",
	})
	var out bytes.Buffer
	c := smallRun(url, &out)
	c.Scripts = []ScriptFile{{Path: filepath.Join(files, "spill.sql"), Weight: 1}}
	c.Setup = filepath.Join(files, "setup.sql")
	c.Threads, c.Iterations = 1, 2
	c.PlacementTemp = dir
	if err := Run(context.Background(), c); err != nil {
		if badinput.Is(err) && strings.Contains(err.Error(), "tablespace") {
			testdb.Unavailable(t, fmt.Sprintf("the server cannot use a directory of this test: %v", err))
		}
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	var files3 int64
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(l, "[SPILL.SQL-1], RowsReturned, "); ok {
			files3, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if files3 < 2 {
		t.Errorf("the sorts' temporary files were not in --placement-temp's tablespace (%d seen over 2 iterations):\n%s", files3, text)
	}
	for _, w := range []string{"# note: where: temporary files go to tablespace dbprobe_ts_", " at " + dir + " (on every connection: SET temp_tablespaces = ", fsText(t, dir)} {
		if !strings.Contains(text, w) {
			t.Errorf("output lacks %q:\n%s", w, text)
		}
	}
	if n := query(t, url, "SELECT COUNT(*) FROM pg_tablespace WHERE spcname LIKE 'dbprobe_ts_%'"); n != 0 {
		t.Errorf("%d tablespaces of dbprobe's are left", n)
	}
}

// A directory the server cannot take is refused in one line that names
// the OS account that must own it; nothing is left.
func TestPlacementRefusedPostgres(t *testing.T) {
	url := testdb.FreshPostgresDatabase(t)
	missing := filepath.Join(t.TempDir(), "missing")
	for _, dir := range []string{missing} {
		var out bytes.Buffer
		c := mixRun(url, &out, 10, 1, 4)
		c.Placement = dir
		err := Run(context.Background(), c)
		if !badinput.Is(err) {
			t.Fatalf("--placement %s: %v, want bad input", dir, err)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, "no such directory") || !strings.Contains(msg, "give it to the server's OS user") {
			t.Errorf("--placement %s: %q", dir, msg)
		}
		if st := tableExists(t, url); st.Exists {
			t.Error("the table is left")
		}
	}
	if os.Geteuid() == 0 {
		// A directory of root's, which the server (postgres) may not take.
		dir := t.TempDir()
		var out bytes.Buffer
		c := mixRun(url, &out, 10, 1, 4)
		c.Placement = dir
		err := Run(context.Background(), c)
		if !badinput.Is(err) || strings.Contains(err.Error(), "needs a superuser") || !strings.Contains(err.Error(), "the server's OS user here: postgres") {
			t.Errorf("--placement on a directory of root's: %v", err)
		}
	}
}

// On SQLite, which has no Placer, --placement without --db makes the
// database file in the directory: the header names that file and its
// file system, and the directory dbprobe made for it goes at exit.
func TestPlacementSQLiteDefaultFile(t *testing.T) {
	t.Setenv("DBPROBE_DB", "")
	dir := t.TempDir()
	var out bytes.Buffer
	c := mixRun("", &out, 100, 1, 12)
	c.Placement = dir
	if err := Run(context.Background(), c); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	for _, w := range []string{"# note: where: table dbprobe_oltp is in the database's file, made in --placement " + dir + ", file " + dir + "/dbprobe-", "/stress.db" + fsText(t, dir)} {
		if !strings.Contains(text, w) {
			t.Errorf("output lacks %q:\n%s", w, text)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the database's directory is left in %s", dir)
	}
}

// --placement-temp on SQLite: where its driver has no TempPlacer it is
// refused, naming what is missing; where it has, the header says where
// temporary files go.
func TestPlacementTempSQLite(t *testing.T) {
	url := "sqlite://" + filepath.ToSlash(filepath.Join(t.TempDir(), "s.db"))
	dir := t.TempDir()
	var out bytes.Buffer
	c := mixRun(url, &out, 100, 1, 12)
	c.PlacementTemp = dir
	err := Run(context.Background(), c)
	db := openURL(t, url)
	has := driver.Describe(db).OK(driver.CapTempPlace)
	db.Close()
	if !has {
		if !badinput.Is(err) || !strings.Contains(err.Error(), "--placement-temp "+dir+": SQLite has no "+driver.CapTempPlace.String()) {
			t.Errorf("SQLite without a TempPlacer: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "# note: where: temporary files go to ") {
		t.Errorf("no note of where temporary files go:\n%s", out.String())
	}
}

// A directory for a database inside dbprobe must be there and writable by
// dbprobe's own OS account, which the refusal names.
func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	if err := checkWritable("--placement-temp", dir); err != nil {
		t.Errorf("a writable directory: %v", err)
	}
	if err := checkWritable("--placement-temp", filepath.Join(dir, "missing")); !badinput.Is(err) || !strings.Contains(err.Error(), "writable by OS user "+experiment.CurrentUser()) {
		t.Errorf("a missing directory: %v", err)
	}
	if os.Geteuid() != 0 {
		ro := t.TempDir()
		os.Chmod(ro, 0o555)
		if err := checkWritable("--placement-temp", ro); !badinput.Is(err) || !strings.Contains(err.Error(), "cannot write there") {
			t.Errorf("a read-only directory: %v", err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the check left %d files", len(entries))
	}
}

// A run killed twice leaves its table and its tablespace; the next run
// with the same --placement drops both (the table, then the empty
// tablespace dbprobe's marker table records), says so in a line, and
// runs. A tablespace of the user's in the directory is refused in one
// line naming the DROP TABLESPACE that would free it, and stays.
func TestPlacementLeftoversPostgres(t *testing.T) {
	url := testdb.FreshPostgresDatabase(t)
	dir := serverDir(t, "", "postgres")
	ctx := context.Background()
	db := openURL(t, url)
	// What a killed run leaves: its Location and its table in it, filled.
	loc, err := db.(driver.Placer).CreateLocation(ctx, dir)
	if err != nil {
		db.Close()
		if badinput.Is(err) {
			testdb.Unavailable(t, fmt.Sprintf("the server cannot use a directory of this test: %v", err))
		}
		t.Fatal(err)
	}
	left := driver.DataTable{Name: oltpTableName, PayloadBytes: 300, Where: &loc}
	if err := db.(driver.TableFiller).CreateDataTable(ctx, left); err != nil {
		t.Fatal(err)
	}
	if _, err := db.(driver.TableFiller).FillTable(ctx, left, 1, 10); err != nil {
		t.Fatal(err)
	}
	db.Close()

	var out, errs bytes.Buffer
	c := mixRun(url, &out, 100, 1, 8)
	c.Placement, c.Stderr = dir, &errs
	if err := Run(ctx, c); err != nil {
		t.Fatalf("the run after a killed one: %v\n%s", err, errs.String())
	}
	for _, w := range []string{
		"dbprobe: table dbprobe_oltp: an earlier run left it",
		"dbprobe: tablespace " + loc.Name + " at " + dir + ": an earlier run left it (--keep, or a run that was killed); dbprobe's marker table records creating it and it was empty, so it was dropped\n",
	} {
		if !strings.Contains(errs.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, errs.String())
		}
	}
	if n := query(t, url, "SELECT COUNT(*) FROM pg_tablespace WHERE spcname LIKE 'dbprobe_ts_%'"); n != 0 {
		t.Errorf("%d tablespaces of dbprobe's are left", n)
	}

	exec(t, url, "CREATE TABLESPACE user_ts LOCATION '"+dir+"'")
	t.Cleanup(func() { exec(t, url, "DROP TABLESPACE IF EXISTS user_ts") })
	out.Reset()
	c = mixRun(url, &out, 100, 1, 8)
	c.Placement = dir
	err = Run(ctx, c)
	if !badinput.Is(err) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "tablespace user_ts is there, which dbprobe did not create") ||
		!strings.Contains(err.Error(), `DROP TABLESPACE "user_ts"`) || strings.Contains(err.Error(), "OS user") {
		t.Errorf("a directory in use by the user's tablespace: %v", err)
	}
	if n := query(t, url, "SELECT COUNT(*) FROM pg_tablespace WHERE spcname = 'user_ts'"); n != 1 {
		t.Error("the user's tablespace is gone")
	}
	if st := tableExists(t, url); st.Exists {
		t.Error("the table is left")
	}
}

// On SQLite with --db, --placement is refused in one line that says what
// to give once, not twice.
func TestPlacementSQLiteWithDB(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	c := mixRun("sqlite://"+filepath.ToSlash(filepath.Join(t.TempDir(), "s.db")), &out, 10, 1, 4)
	c.Placement = dir
	err := Run(context.Background(), c)
	if !badinput.Is(err) || strings.Count(err.Error(), "--db") != 2 || !strings.HasSuffix(err.Error(), "drop --placement and give --db sqlite://"+filepath.ToSlash(dir)+"/stress.db") {
		t.Errorf("--placement with --db on SQLite: %v", err)
	}
}

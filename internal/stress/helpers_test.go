package stress

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
)

// openURL opens url as the command resolves a --db, with one session, so
// a test can look at the database through the same driver the run used.
// The caller closes it.
func openURL(t *testing.T, url string) driver.DB {
	t.Helper()
	target, err := experiment.ResolveTarget(experiment.TargetConfig{DB: url}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := target.Open(context.Background(), driver.Options{Sessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// sqlConn opens url and one SQLConn on it; closeAll closes both.
func sqlConn(t *testing.T, url string) (conn driver.SQLConn, closeAll func()) {
	t.Helper()
	db := openURL(t, url)
	conn, err := db.(driver.SQLRunner).SQLConn(context.Background(), driver.SQLOptions{})
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return conn, func() {
		conn.Close()
		db.Close()
	}
}

// scriptRun is smallRun of the script files a test wrote to dir:
// setup.sql once, then loop.sql each iteration.
func scriptRun(url string, out *bytes.Buffer, dir string) *Config {
	c := smallRun(url, out)
	c.Setup = filepath.Join(dir, "setup.sql")
	c.Scripts = []ScriptFile{{Path: filepath.Join(dir, "loop.sql"), Weight: 1}}
	return c
}

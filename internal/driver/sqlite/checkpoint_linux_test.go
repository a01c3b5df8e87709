package sqlite

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// locksOn counts the POSIX locks this process holds on path's inode, from
// /proc/locks; the test is skipped where there is none.
func locksOn(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Skipf("no /proc/locks to read the file locks from: %v", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ino := st.Sys().(*syscall.Stat_t).Ino
	pid := strconv.Itoa(os.Getpid())
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		// 1: POSIX  ADVISORY  READ 24966 fe:00:9994278 1073741826 1073742335
		f := strings.Fields(line)
		if len(f) >= 6 && f[1] == "POSIX" && f[4] == pid && strings.HasSuffix(f[5], ":"+strconv.FormatUint(ino, 10)) {
			n++
		}
	}
	return n
}

// syncedDB opens a database file under synchronous=NORMAL through the
// given VFS and writes until the checkpointer has run and synced a
// background pass.
func syncedDB(t *testing.T, path, vfs string) driver.DB {
	t.Helper()
	ctx := context.Background()
	d := openURL(t, "sqlite://"+path+"?vfs="+vfs, driver.Options{Sessions: 1})
	tbl := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: []string{"FIELD0"}, FieldLength: 100}
	s := tableSession(t, d, tbl)
	defer s.Close()
	value := [][]byte{[]byte(strings.Repeat("v", 100))}
	cp := d.(*db).ckpt
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; cp.synced.Load() == 0; i++ {
		if time.Now().After(deadline) {
			d.Close()
			t.Fatalf("no synced background checkpoint after %d records", i)
		}
		if err := s.Insert(ctx, []byte(fmt.Sprintf("k%07d", i)), value); err != nil {
			d.Close()
			t.Fatal(err)
		}
	}
	return d
}

// TestBackgroundSyncKeepsSQLiteLocks: the checkpointer's sync of the
// database file must not drop the SHARED lock SQLite keeps on it in WAL
// mode, as closing a descriptor of the file would (see syncFiles).
func TestBackgroundSyncKeepsSQLiteLocks(t *testing.T) {
	for _, vfs := range vfsNames {
		t.Run(vfs, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "locks.db")
			d := syncedDB(t, path, vfs)
			defer d.Close()
			if n := locksOn(t, path); n == 0 {
				t.Errorf("after a synced background checkpoint this process holds no lock on %s: SQLite's were dropped", path)
			}
		})
	}
}

// pythonCount runs a SELECT count(*) on the database from another process,
// Python's sqlite3 module, and returns what it printed; the test is skipped
// without python3.
func pythonCount(t *testing.T, path string) (string, error) {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH to open the database from another process (Debian: apt-get install python3)")
	}
	script := "import sqlite3, sys\n" +
		"c = sqlite3.connect(sys.argv[1], timeout=0.2)\n" +
		"print(c.execute('SELECT count(*) FROM usertable').fetchone()[0])\n" +
		"c.close()\n"
	out, err := exec.Command(python, "-c", script, path).CombinedOutput()
	return string(out), err
}

// TestAnotherProcessLeavesTheWAL: a process that opens the database while
// dbprobe has it open and closes it again must not take itself for the
// last connection and checkpoint and delete the WAL under dbprobe's feet.
// The other process is Python's sqlite3 module, as a user's quick look at
// the file would be: SQLite 3.40 (Debian 12's) deleted the -wal and -shm
// files of a running dbprobe that had lost its locks; the SQLite built
// into the cgo library does not, so it cannot stand in here.
func TestAnotherProcessLeavesTheWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	d := syncedDB(t, path, vfsShared)
	defer d.Close()
	if out, err := pythonCount(t, path); err != nil {
		t.Fatalf("the other process: %v\n%s", err, out)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err != nil {
			t.Errorf("after another process read the database and closed it, %s: %v", filepath.Base(path+suffix), err)
		}
	}
}

// TestExclusiveVFSKeepsOtherProcessesOut: under the default VFS the file
// is dbprobe's alone while it is open, so another process is refused
// rather than let in to read or to remove the WAL; and no -shm file
// exists, the WAL index being in memory.
func TestExclusiveVFSKeepsOtherProcessesOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "excl.db")
	d := openURL(t, "sqlite://"+path, driver.Options{Sessions: 1})
	defer d.Close()
	if _, err := os.Stat(path + "-shm"); !os.IsNotExist(err) {
		t.Errorf("%s-shm under vfs=%s: %v, want no such file", filepath.Base(path), vfsExclusive, err)
	}
	d.Close()
	// Written through the checkpointer's syncs, so that the test also
	// covers the lock surviving them.
	d = syncedDB(t, path, vfsExclusive)
	defer d.Close()
	out, err := pythonCount(t, path)
	if err == nil || !strings.Contains(out, "database is locked") {
		t.Errorf("another process read a database dbprobe holds under vfs=%s: %v\n%s", vfsExclusive, err, out)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("after another process tried the database: %v", err)
	}
}

// TestFileHeldElsewhereIsBadInput: a database another process has open
// cannot be taken for dbprobe alone; Open says so and how to share it,
// once the URL's busy timeout is over.
func TestFileHeldElsewhereIsBadInput(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH to hold the database from another process (Debian: apt-get install python3)")
	}
	path := filepath.Join(t.TempDir(), "held.db")
	d := openURL(t, "sqlite://"+path, driver.Options{Sessions: 1})
	keepFile(t, d)
	d.Close()
	// The other process keeps a connection in WAL mode, so a SHARED lock
	// on the file, until its standard input closes.
	script := "import sqlite3, sys\n" +
		"c = sqlite3.connect(sys.argv[1])\n" +
		"c.execute('PRAGMA journal_mode').fetchone()\n" +
		"print('ready', flush=True)\n" +
		"sys.stdin.read()\n"
	cmd := exec.Command(python, "-c", script, path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	line := make([]byte, 6)
	if _, err := io.ReadFull(stdout, line); err != nil || string(line) != "ready\n" {
		t.Fatalf("the other process did not open the database: %q %v", line, err)
	}
	target, err := driver.ParseTarget("sqlite://"+path+"?busy_timeout=50", "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := Driver{}.Open(context.Background(), target, driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		t.Fatal("Open succeeded while another process has the file open")
	}
	if !badinput.Is(err) || !strings.Contains(err.Error(), "another process has") || !strings.Contains(err.Error(), "?vfs=unix") {
		t.Errorf("Open: %v (bad input: %v), want bad input naming the other process and ?vfs=unix", err, badinput.Is(err))
	}
	shared, err := driver.ParseTarget("sqlite://"+path+"?vfs=unix", "")
	if err != nil {
		t.Fatal(err)
	}
	db, err = Driver{}.Open(context.Background(), shared, driver.Options{Sessions: 1})
	if err != nil {
		t.Fatalf("Open with ?vfs=unix beside another process: %v", err)
	}
	db.Close()
}

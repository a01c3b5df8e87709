package sqlite

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"dbprobe/internal/driver"
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

// syncedDB opens a database file under synchronous=NORMAL and writes until
// the checkpointer has run and synced a background pass.
func syncedDB(t *testing.T, path string) driver.DB {
	t.Helper()
	ctx := context.Background()
	d := openURL(t, "sqlite://"+path, driver.Options{Sessions: 1})
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
	path := filepath.Join(t.TempDir(), "locks.db")
	d := syncedDB(t, path)
	defer d.Close()
	if n := locksOn(t, path); n == 0 {
		t.Errorf("after a synced background checkpoint this process holds no lock on %s: SQLite's were dropped", path)
	}
}

// TestAnotherProcessLeavesTheWAL: a process that opens the database while
// dbprobe has it open and closes it again must not take itself for the
// last connection and checkpoint and delete the WAL under dbprobe's feet.
// The other process is Python's sqlite3 module, as a user's quick look at
// the file would be: SQLite 3.40 (Debian 12's) deleted the -wal and -shm
// files of a running dbprobe that had lost its locks; the SQLite built
// into the cgo library does not, so it cannot stand in here.
func TestAnotherProcessLeavesTheWAL(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH to open the database from another process (Debian: apt-get install python3)")
	}
	path := filepath.Join(t.TempDir(), "shared.db")
	d := syncedDB(t, path)
	defer d.Close()
	script := "import sqlite3, sys\n" +
		"c = sqlite3.connect(sys.argv[1])\n" +
		"print(c.execute('SELECT count(*) FROM usertable').fetchone()[0])\n" +
		"c.close()\n"
	if out, err := exec.Command(python, "-c", script, path).CombinedOutput(); err != nil {
		t.Fatalf("the other process: %v\n%s", err, out)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err != nil {
			t.Errorf("after another process read the database and closed it, %s: %v", filepath.Base(path+suffix), err)
		}
	}
}

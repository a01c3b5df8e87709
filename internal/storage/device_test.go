package storage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// The tests here check the storage figures against a block device that
// only the test uses: an ext4 file system in a file, mounted through a
// loop device of its own, holding a throwaway server's data (or a SQLite
// file), and, for the rates, throttled for the server's processes by
// cgroup v1 blkio. They need root; without it they skip (fail under
// CI=true).

// needRoot skips a test that needs root and the tools it runs.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		testdb.Unavailable(t, "this test needs root: a loop-mounted file system and blkio throttling")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			testdb.Unavailable(t, tool+" is missing: install the Debian packages mount and e2fsprogs")
		}
	}
}

// device is a loop-mounted file system of the test's.
type device struct {
	mnt  string
	name string // its /proc/diskstats name, loopN
	num  string // MAJOR:MINOR
}

// loopDevice makes an ext4 file system of sizeMB in a file, mounts it and
// gives its root to owner ("" for root); the test's end unmounts it and
// detaches the loop device.
func loopDevice(t *testing.T, sizeMB int, owner string) device {
	t.Helper()
	needRoot(t)
	dir, err := os.MkdirTemp("", "dbprobe-storage-dev-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	img := filepath.Join(dir, "fs.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, int64(sizeMB)<<20); err != nil {
		t.Fatal(err)
	}
	cmd := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v: %s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	cmd("mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=0,lazy_journal_init=0", img)
	loop := cmd("losetup", "--find", "--show", img)
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o755)
	if out, err := exec.Command("mount", loop, mnt).CombinedOutput(); err != nil {
		exec.Command("losetup", "-d", loop).Run()
		t.Fatalf("mount: %v: %s", err, out)
	}
	t.Cleanup(func() {
		for i := 0; i < 50 && exec.Command("umount", mnt).Run() != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
		exec.Command("losetup", "-d", loop).Run()
	})
	if owner != "" {
		u, err := user.Lookup(owner)
		if err != nil {
			testdb.Unavailable(t, "no OS user "+owner)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		os.Chown(mnt, uid, gid)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(loop, &st); err != nil {
		t.Fatal(err)
	}
	return device{mnt: mnt, name: filepath.Base(loop), num: fmt.Sprintf("%d:%d", unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)))}
}

// blkioRoot is cgroup v1's blkio hierarchy.
const blkioRoot = "/sys/fs/cgroup/blkio"

// needBlkio skips a test without cgroup v1 blkio throttling.
func needBlkio(t *testing.T) {
	if _, err := os.Stat(filepath.Join(blkioRoot, "blkio.throttle.read_bps_device")); err != nil {
		testdb.Unavailable(t, "no cgroup v1 blkio controller at "+blkioRoot+": the throttled tests need one")
	}
}

// throttle puts the process tree of pid into a blkio cgroup of the
// test's that caps its reads or writes of dev at bps bytes per second;
// the group goes at the test's end, its processes back to the root
// group. It may run on a goroutine other than the test's.
func throttle(t *testing.T, dev device, pid int, file string, bps int64) error {
	root := blkioRoot
	group := filepath.Join(root, fmt.Sprintf("dbprobe-storage-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(group, 0o755); err != nil {
		return err
	}
	t.Cleanup(func() {
		if data, err := os.ReadFile(filepath.Join(group, "cgroup.procs")); err == nil {
			for _, p := range strings.Fields(string(data)) {
				os.WriteFile(filepath.Join(root, "cgroup.procs"), []byte(p), 0)
			}
		}
		os.Remove(group)
	})
	if err := os.WriteFile(filepath.Join(group, "blkio.throttle."+file), []byte(fmt.Sprintf("%s %d", dev.num, bps)), 0); err != nil {
		return fmt.Errorf("setting %s: %w", file, err)
	}
	for _, p := range tree(pid) {
		// A process that ended meanwhile is no matter.
		os.WriteFile(filepath.Join(group, "cgroup.procs"), []byte(strconv.Itoa(p)), 0)
	}
	return nil
}

// tree is pid and every process descended from it.
func tree(pid int) []int {
	out := []int{pid}
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 {
			parent[p], _ = strconv.Atoi(fields[1])
		}
	}
	for i := 0; i < len(out); i++ {
		for p, pp := range parent {
			if pp == out[i] {
				out = append(out, p)
			}
		}
	}
	return out
}

// postgresOn starts a throwaway PostgreSQL with its data on dev, or only
// its WAL when walOnly.
func postgresOn(t *testing.T, dev device, walOnly bool, settings map[string]string) *instance.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := instance.Options{DataDir: filepath.Join(dev.mnt, "data"), Settings: settings}
	if walOnly {
		opts = instance.Options{InitArgs: []string{"--waldir=" + filepath.Join(dev.mnt, "wal")}, Settings: settings}
	}
	s, err := instance.Start(ctx, instance.Postgres, opts)
	if err != nil {
		testdb.Unavailable(t, "PostgreSQL did not start: "+err.Error())
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// restart stops the server cleanly and starts it again: its caches go.
func restart(ctx context.Context, s *instance.Server) error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.Restart(ctx)
}

// postmaster is the PID of the server's main process.
func postmaster(s *instance.Server) (int, error) {
	data, err := os.ReadFile(filepath.Join(s.DataDir(), "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.SplitN(string(data), "\n", 2)[0])
}

// throttleServer throttles every process of the server.
func throttleServer(t *testing.T, dev device, s *instance.Server, file string, bps int64) error {
	pid, err := postmaster(s)
	if err != nil {
		return err
	}
	return throttle(t, dev, pid, file, bps)
}

// near says whether got is within share of want.
func near(got, want, share float64) bool { return math.Abs(got-want) <= share*want }

// A cold scan's bytes, counted by the table's own device, are the
// table's size on disk within 10%: PostgreSQL restarted between fill and
// scan (its cache emptied) with the table's files evicted before each
// pass, and SQLite with the page cache dropped.
func TestColdScanReadsTheTable(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		dev := loopDevice(t, 400, "postgres")
		srv := postgresOn(t, dev, false, map[string]string{"shared_buffers": "16MB"})
		c := small(t, Scan, srv.URL())
		// The default size, twice shared_buffers, with a floor of 1 MB
		// instead of 1 GB.
		c.Size, c.minDefault, c.Duration = 0, 1_000_000, time.Second
		c.Restart = func(ctx context.Context) error { return restart(ctx, srv) }
		o, st := mustRun(t, c)
		checkColdBytes(t, st, dev, true)
		// The fill was settled (VACUUM): the first pass sets no hint
		// bits, so it writes next to nothing back (it wrote the whole
		// table before).
		if w := st.Steps[0].DeviceWriteBytes; w < 0 || w > st.Table.Bytes/10 || !strings.Contains(o.text, "settled after the fill, before the measured part: VACUUM (ANALYZE)") {
			t.Errorf("the first pass wrote %d bytes of a %d-byte table\n%s", w, st.Table.Bytes, o.text)
		}
		if want := "# note: scan: --size 33.55MB (default): twice the database's cache (shared_buffers = 16MB: 16.78MB)"; !strings.Contains(o.text, want) {
			t.Errorf("no %q in the header:\n%s", want, o.text)
		}
		if st.Table.Rows != 2*16<<20/(8+DefaultPayload) {
			t.Errorf("%d rows for a table of twice 16 MB", st.Table.Rows)
		}
	})
	// InnoDB reads its files with O_DIRECT (innodb_flush_method's default
	// since MariaDB 10.6), past the page cache: what makes the table cold
	// is the restart alone, which empties the buffer pool — as long as
	// the pool is not dumped at shutdown and reloaded at startup, as it is
	// by default, which the server is told not to do here.
	t.Run("mariadb", func(t *testing.T) {
		dev := loopDevice(t, 400, "")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		srv, err := instance.Start(ctx, instance.MariaDB, instance.Options{DataDir: filepath.Join(dev.mnt, "data"), Settings: map[string]string{
			"innodb_buffer_pool_size": "16M", "innodb_buffer_pool_dump_at_shutdown": "OFF", "innodb_buffer_pool_load_at_startup": "OFF"}})
		if err != nil {
			testdb.Unavailable(t, "MariaDB did not start: "+err.Error())
		}
		t.Cleanup(func() { srv.Close() })
		c := small(t, Scan, srv.URL())
		c.Size, c.Duration = 40_000_000, time.Second
		c.Restart = func(ctx context.Context) error { return restart(ctx, srv) }
		o, st := mustRun(t, c)
		checkColdBytes(t, st, dev, true)
		if !strings.Contains(o.text, "innodb_flush_method") {
			t.Errorf("the header does not show innodb_flush_method:\n%s", o.text)
		}
		t.Logf("%s; %s", st.Verdict, st.Steps[0].Cold)
	})
	t.Run("sqlite", func(t *testing.T) {
		dev := loopDevice(t, 200, "")
		c := small(t, Scan, "sqlite://"+filepath.Join(dev.mnt, "st.db"))
		c.Size, c.Duration = 32_000_000, time.Second
		_, st := mustRun(t, c)
		checkColdBytes(t, st, dev, false)
	})
}

// checkColdBytes checks a cold scan's proof against its device: the
// device read the table's size on disk within 10% in the median pass
// (firstOnly: in the first, the only one after the database's cache was
// emptied; a table larger than that cache leaves part of itself in it for
// the next pass).
func checkColdBytes(t *testing.T, st *result.StorageSummary, dev device, firstOnly bool) {
	t.Helper()
	p := st.Proof
	if p == nil || p.Device != dev.name || !p.Physical || !strings.HasPrefix(st.Verdict, "physical: the device "+dev.name) {
		t.Fatalf("proof %+v, verdict %q", p, st.Verdict)
	}
	var reads []float64
	for _, s := range st.Steps {
		if s.Bytes == st.Table.Bytes {
			reads = append(reads, float64(s.DeviceReadBytes))
		}
	}
	if len(reads) == 0 {
		t.Fatalf("no whole pass in %+v", st.Steps)
	}
	got := reads[0]
	if !firstOnly {
		slices.Sort(reads)
		got = reads[len(reads)/2]
	}
	if !near(got, float64(st.Table.Bytes), 0.10) {
		t.Errorf("the device read %.0f bytes in a pass over a %d-byte table, more than 10%% apart; passes: %+v", got, st.Table.Bytes, st.Steps)
	}
}

// PostgreSQL's log bytes, from its counters, are the WAL position's
// advance over each degree's copies, within 10%.
func TestLogBytesAreTheWALPositions(t *testing.T) {
	url := testdb.FreshPostgresDatabase(t)
	db := openDB(t, url)
	lsn := map[string][2]int64{}
	c := small(t, LogCopy, url)
	c.Size, c.Dops, c.Duration = 16_000_000, []int{1, 2}, 200*time.Millisecond
	checkpointed := make(chan error, 1)
	c.around = func(label string, after bool) {
		if label == "DOP 2" && !after {
			// A checkpoint while DOP 2 copies, which it must count.
			go func() {
				time.Sleep(100 * time.Millisecond)
				checkpointed <- execSQL(db, "CHECKPOINT")
			}()
		}
		v := lsn[label]
		if after {
			v[1] = walBytes(t, db)
		} else {
			v[0] = walBytes(t, db)
		}
		lsn[label] = v
	}
	o, st := mustRun(t, c)
	if len(st.Steps) != 2 {
		t.Fatalf("steps %+v", st.Steps)
	}
	if err := <-checkpointed; err != nil {
		t.Fatalf("CHECKPOINT: %v", err)
	}
	if a := st.Amplification; st.Steps[1].Checkpoints < 1 || a == nil || a.Checkpoints < st.Steps[1].Checkpoints || a.LogBytes != st.Steps[0].LogBytes+st.Steps[1].LogBytes ||
		!strings.Contains(o.text, fmt.Sprintf("; %s during the run (the database's checkpoints counter)", result.Plural(a.Checkpoints, "checkpoint"))) {
		t.Errorf("checkpoints: steps %+v, amplification %+v\n%s", st.Steps, st.Amplification, o.text)
	}
	for _, s := range st.Steps {
		pos := lsn[s.Label]
		want := pos[1] - pos[0]
		if !near(float64(s.LogBytes), float64(want), 0.10) {
			t.Errorf("%s: log bytes %d, the WAL position moved %d", s.Label, s.LogBytes, want)
		}
		if s.LogBytes < s.Bytes/2 {
			t.Errorf("%s: %d log bytes for %d copied", s.Label, s.LogBytes, s.Bytes)
		}
	}
}

// walBytes is pg_current_wal_lsn() in bytes.
func walBytes(t *testing.T, db driver.DB) int64 {
	t.Helper()
	var n int64
	queryRows(t, db, "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint", func(row []any) { n, _ = row[0].(int64) })
	return n
}

// A scan reads at the rate its device is throttled to, within 15%.
func TestThrottledScan(t *testing.T) {
	dev := loopDevice(t, 400, "postgres")
	needBlkio(t)
	srv := postgresOn(t, dev, false, map[string]string{"shared_buffers": "16MB"})
	const bps = 12_000_000
	c := small(t, Scan, srv.URL())
	c.Size, c.Duration = 40_000_000, 4*time.Second
	c.Restart = func(ctx context.Context) error {
		if err := restart(ctx, srv); err != nil {
			return err
		}
		return throttleServer(t, dev, srv, "read_bps_device", bps)
	}
	o, st := mustRun(t, c)
	// The scan's rate counts the table's size on disk, of which a
	// sequential scan reads only the heap (not the index or the free
	// space map: the device read about 86% of it in these runs); what the
	// cap bounds is the device's bytes, so those are held against it.
	devRate := 0.0
	if st.Proof != nil && st.Seconds > 0 {
		devRate = float64(st.Proof.DeviceBytes) / st.Seconds
	}
	if !near(devRate, bps, 0.15) || st.Rate < 0.85*bps || st.Rate > 1.35*bps {
		t.Errorf("scan at %.1f MB/s (the device read %.1f MB/s), the device is throttled to %.1f MB/s\n%s", st.Rate/1e6, devRate/1e6, float64(bps)/1e6, o.text)
	}
	if !st.Proof.Physical {
		t.Errorf("verdict %q", st.Verdict)
	}
	// Second by second, the device read at the cap while the scan ran,
	// and never above it.
	d := st.Device
	if d == nil || d.Name != dev.name || d.Bursts == nil {
		t.Fatalf("device figures %+v", d)
	}
	atCap, maxRead := 0, 0.0
	for _, s := range d.PerSecond {
		if s.Seconds >= 0.9 && near(s.ReadRate, bps, 0.15) {
			atCap++
		}
		maxRead = max(maxRead, s.ReadRate)
	}
	// (The first read after the fill sets PostgreSQL's hint bits, whose
	// pages are then written: the device's writes are not capped.)
	if atCap < 2 || maxRead > 1.25*bps || d.Bursts.MaxRate < maxRead {
		t.Errorf("%d seconds at the cap, busiest read %.1f MB/s, bursts %+v, per second %+v", atCap, maxRead/1e6, d.Bursts, d.PerSecond)
	}
	if !strings.Contains(o.text, "# device "+dev.name+" per second (") {
		t.Errorf("no per-second device line:\n%s", o.text)
	}
}

// MariaDB's scan reads at the rate its data's device is throttled to,
// within 15%, and is physical: its data directory on the test's loop
// device, the server restarted before the scan (its buffer pool, at its
// minimum of 6 MB for 16 kB pages, emptied and not reloaded) and then its
// reads of that device capped for its own process. InnoDB reads its files with O_DIRECT, past the page
// cache, so every page the scan needs comes from the device, read ahead
// a whole extent at a time by InnoDB's I/O threads (in the same process,
// so under the same cap).
func TestThrottledScanMariaDB(t *testing.T) {
	dev := loopDevice(t, 400, "")
	needBlkio(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := instance.Start(ctx, instance.MariaDB, instance.Options{DataDir: filepath.Join(dev.mnt, "data"), Settings: map[string]string{
		"innodb_buffer_pool_size": "6M", "innodb_flush_method": "O_DIRECT",
		"innodb_buffer_pool_dump_at_shutdown": "OFF", "innodb_buffer_pool_load_at_startup": "OFF"}})
	if err != nil {
		testdb.Unavailable(t, "MariaDB did not start: "+err.Error())
	}
	t.Cleanup(func() { srv.Close() })
	const bps = 25_000_000
	c := small(t, Scan, srv.URL())
	c.Size, c.Duration = 60_000_000, 3*time.Second
	c.Restart = func(ctx context.Context) error {
		if err := restart(ctx, srv); err != nil {
			return err
		}
		pid, err := mariadbPID(srv)
		if err != nil {
			return err
		}
		return throttle(t, dev, pid, "read_bps_device", bps)
	}
	o, st := mustRun(t, c)
	devRate := 0.0
	if st.Proof != nil && st.Seconds > 0 {
		devRate = float64(st.Proof.DeviceBytes) / st.Seconds
	}
	if st.Proof == nil || !st.Proof.Physical || !near(devRate, bps, 0.15) || !near(st.Rate, bps, 0.15) {
		t.Errorf("scan at %.1f MB/s (the device read %.1f MB/s), the device is throttled to %.1f MB/s; verdict %q\n%s", st.Rate/1e6, devRate/1e6, float64(bps)/1e6, st.Verdict, o.text)
	}
	// The eviction is said to be a precaution: O_DIRECT reads past the
	// OS page cache whatever it holds.
	if !slices.ContainsFunc(st.Cold, func(l string) bool { return strings.Contains(l, "a precaution only: the database reads past it (") }) {
		t.Errorf("cold: %q", st.Cold)
	}
	// Second by second, the device read at the cap while the scan ran,
	// and never well above it.
	d := st.Device
	if d == nil || d.Name != dev.name {
		t.Fatalf("device figures %+v", d)
	}
	atCap, maxRead := 0, 0.0
	for _, s := range d.PerSecond {
		if s.Seconds >= 0.9 && near(s.ReadRate, bps, 0.15) {
			atCap++
		}
		maxRead = max(maxRead, s.ReadRate)
	}
	if atCap < 1 || maxRead > 1.25*bps {
		t.Errorf("%d seconds at the cap, busiest read %.1f MB/s, per second %+v", atCap, maxRead/1e6, d.PerSecond)
	}
	t.Logf("scan %.1f MB/s, device %.1f MB/s at a cap of %.1f MB/s; %s", st.Rate/1e6, devRate/1e6, float64(bps)/1e6, st.Verdict)
}

// mariadbPID is the PID of a throwaway MariaDB's server process.
func mariadbPID(s *instance.Server) (int, error) {
	data, err := os.ReadFile(filepath.Join(s.Dir(), "mysqld.pid"))
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("mysqld.pid holds %q", data)
	}
	return pid, nil
}

// logcopy finds a log device's write cap, within 15%, and names the log:
// PostgreSQL's WAL alone on the throttled device.
func TestThrottledLogCopy(t *testing.T) {
	dev := loopDevice(t, 600, "postgres")
	needBlkio(t)
	// New WAL segments are not zero-filled (wal_init_zero=off), which would
	// write each segment twice: the device's cap is then the log's.
	srv := postgresOn(t, dev, true, map[string]string{"max_wal_size": "2GB", "checkpoint_timeout": "1h", "wal_init_zero": "off"})
	const bps = 8_000_000
	c := small(t, LogCopy, srv.URL())
	c.Size, c.Dops, c.Duration = 20_000_000, []int{1, 2}, 100*time.Millisecond
	c.around = func(label string, after bool) {
		if !after && label == "DOP 1" {
			if err := throttleServer(t, dev, srv, "write_bps_device", bps); err != nil {
				t.Errorf("throttling the server: %v", err)
			}
		}
	}
	o, st := mustRun(t, c)
	for _, s := range st.Steps {
		if !near(s.LogRate, bps, 0.15) {
			t.Errorf("%s: log at %.1f MB/s, the device is capped at %.1f MB/s\n%s", s.Label, s.LogRate/1e6, float64(bps)/1e6, o.text)
		}
	}
	if !strings.HasPrefix(st.Verdict, "log-bound") {
		t.Errorf("verdict %q\n%s", st.Verdict, o.text)
	}
	t.Logf("verdict: %s", st.Verdict)
}

// MariaDB's redo log alone on the throttled device: logcopy watches the
// log's device (innodb_log_group_home_dir), not the data's, and finds the
// cap within 15% and names the log, though MariaDB copies serially (no
// flat rate across degrees to see) and samples no waits by default.
func TestThrottledLogCopyMariaDB(t *testing.T) {
	dev := loopDevice(t, 200, "")
	needBlkio(t)
	logDir := filepath.Join(dev.mnt, "log")
	if err := os.Mkdir(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := instance.Start(ctx, instance.MariaDB, instance.Options{Settings: map[string]string{"innodb_log_group_home_dir": logDir}})
	if err != nil {
		testdb.Unavailable(t, "MariaDB did not start: "+err.Error())
	}
	t.Cleanup(func() { srv.Close() })
	// A copy fills InnoDB's log buffer on a core before it waits on the
	// device: a low cap makes that the smaller part of its time.
	const bps = 2_000_000
	c := small(t, LogCopy, srv.URL())
	c.Size, c.Dops, c.Duration = 6_000_000, []int{1, 2}, 100*time.Millisecond
	c.around = func(label string, after bool) {
		if !after && label == "DOP 1" {
			pid, err := mariadbPID(srv)
			if err == nil {
				err = throttle(t, dev, pid, "write_bps_device", bps)
			}
			if err != nil {
				t.Errorf("throttling the server (pid %d): %v", pid, err)
			}
		}
	}
	o, st := mustRun(t, c)
	if len(st.Steps) != 1 || !near(st.Steps[0].LogRate, bps, 0.15) {
		t.Errorf("steps %+v: the log device is capped at %.1f MB/s\n%s", st.Steps, float64(bps)/1e6, o.text)
	}
	if st.Device == nil || st.Device.Name != dev.name || !strings.HasPrefix(st.Verdict, "log-bound") || !strings.Contains(st.Verdict, "write cap") {
		t.Errorf("device %+v, verdict %q\n%s", st.Device, st.Verdict, o.text)
	}
	t.Logf("verdict: %s", st.Verdict)
}

// execSQL runs one statement through SQL text.
func execSQL(db driver.DB, text string) error {
	ctx := context.Background()
	conn, err := db.(driver.SQLRunner).SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		return err
	}
	defer conn.Close()
	st, err := conn.Prepare(ctx, text)
	if err != nil {
		return err
	}
	defer st.Close()
	_, err = conn.Run(ctx, st, nil, nil)
	return err
}

// A file system that fills in the middle of a write stops the run with
// one line saying so and where, and leaves the database clean: its table
// dropped, the file intact. Another process's file takes the space the
// start of the run saw free, as one does on a shared disk.
func TestDiskFullMidRun(t *testing.T) {
	dev := loopDevice(t, 64, "")
	url := "sqlite://" + filepath.Join(dev.mnt, "st.db")
	c := small(t, Write, url)
	c.Size, c.Chunk, c.Duration = 24_000_000, 2_000_000, time.Minute
	var out, errb testdb.LockedBuffer
	c.Stdout, c.Stderr = &out, &errb
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), c) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "# settings:") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	// Mid-run: once the first chunks are written.
	files := func() int64 {
		var n int64
		for _, f := range []string{"st.db", "st.db-wal"} {
			if st, err := os.Stat(filepath.Join(dev.mnt, f)); err == nil {
				n += st.Size()
			}
		}
		return n
	}
	for start := files(); files() < start+2*c.Chunk && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	ballast := filepath.Join(dev.mnt, "ballast")
	f, err := os.Create(ballast)
	if err != nil {
		t.Fatal(err)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(dev.mnt, &fs); err != nil {
		t.Fatal(err)
	}
	// All the free space but a few blocks, which the run's next chunk
	// needs more than.
	if err := unix.Fallocate(int(f.Fd()), 0, 0, int64(fs.Bavail)*int64(fs.Bsize)-64<<10); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var runErr error
	select {
	case runErr = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the run did not stop within a minute of the disk filling")
	}
	msg := ""
	if runErr != nil {
		msg = runErr.Error()
	}
	if !errors.Is(runErr, ErrRunFailed) || strings.Contains(msg, "\n") || !strings.Contains(msg, "full") || !strings.Contains(msg, dev.mnt) {
		t.Fatalf("disk full: %v\nstderr: %s\nstdout: %s", runErr, errb.String(), out.String())
	}
	t.Logf("%v", runErr)
	os.Remove(ballast)
	tg, err := driver.ParseTarget(url, "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqliteDriverOpen(tg)
	if err != nil {
		t.Fatal(err)
	}
	closeDB := sync.OnceFunc(func() { db.Close() })
	t.Cleanup(closeDB)
	// SQLite needs room in its WAL to drop a table: on a disk this full a
	// drop may fail. Then the run must have said so, and the next run,
	// with space again, drops what was left.
	// The stop line says a table was dropped only when it was, and names
	// one left behind with the statement that drops it.
	var left []string
	for _, table := range []string{"dbprobe_storage_write", "dbprobe_storage_write_src"} {
		if exists(t, db, table) {
			left = append(left, table)
			if !strings.Contains(errb.String(), "could not drop the table "+table+" this run made") {
				t.Errorf("the table %s is still there and the run did not say so; stderr:\n%s", table, errb.String())
			}
			if !dropsTable(msg, table) {
				t.Errorf("the table %s is still there and the stop line does not say how to drop it: %s", table, msg)
			}
			continue
		}
		if dropsTable(msg, table) {
			t.Errorf("the table %s is gone but the stop line says it was left: %s", table, msg)
		}
	}
	if len(left) == 0 && !strings.Contains(msg, " dropped") {
		t.Errorf("both tables are gone and the stop line does not say so: %s", msg)
	}
	if len(left) > 0 {
		t.Logf("left on the full disk, and said: %v", left)
		closeDB()
		again := small(t, Write, url)
		again.Size, again.Chunk, again.Duration = 2_000_000, 2_000_000, time.Minute
		var out2, err2 testdb.LockedBuffer
		again.Stdout, again.Stderr = &out2, &err2
		if err := Run(context.Background(), again); err != nil {
			t.Fatalf("the next run, with space again: %v\n%s", err, err2.String())
		}
		db = openDB(t, url)
		for _, table := range left {
			if exists(t, db, table) {
				t.Errorf("the table %s is still there after the next run", table)
			}
		}
	}
	if got := queryText(t, db, "PRAGMA integrity_check"); got != "ok" {
		t.Errorf("integrity_check: %s", got)
	}
}

// queryText runs a query that returns one text value.
func queryText(t *testing.T, db driver.DB, text string) string {
	t.Helper()
	var got string
	queryRows(t, db, text, func(row []any) {
		if b, ok := row[0].([]byte); ok {
			got = string(b)
		} else {
			got = fmt.Sprint(row[0])
		}
	})
	return got
}

// sqliteDriverOpen opens a target as openDB does, without closing it at
// the test's end, for a test that must close it itself first.
func sqliteDriverOpen(tg driver.Target) (driver.DB, error) {
	d, _, err := driver.Lookup(tg.Driver)
	if err != nil {
		return nil, err
	}
	return d.Open(context.Background(), tg, driver.Options{Sessions: 2})
}

// dropsTable reports whether msg gives the statement that drops table
// itself: "DROP TABLE dbprobe_storage_write" is also the start of the
// statement for dbprobe_storage_write_src.
func dropsTable(msg, table string) bool {
	return regexp.MustCompile(`DROP TABLE ` + regexp.QuoteMeta(table) + `\b`).MatchString(msg)
}

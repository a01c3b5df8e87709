package experiment

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/result"
)

const mountinfo = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
25 22 0:21 / /proc rw,nosuid - proc proc rw
40 22 7:0 / /mnt/small rw,relatime shared:20 - ext4 /dev/loop0 rw
41 22 0:45 / /mnt/small\040disk rw - xfs /dev/loop1 rw
42 40 0:46 / /mnt/small/pg rw - tmpfs tmpfs rw,size=1024k
43 22 0:47 / /mnt/small rw - tmpfs tmpfs rw
`

// The mount that holds a path is the longest mount point above it, the
// last one mounted when two share a point; escapes are undone.
func TestMountOf(t *testing.T) {
	tests := []struct{ path, mount, fstype, device string }{
		{"/var/lib/postgresql", "/", "ext4", "/dev/sda1"},
		{"/mnt/small/x/ycsb.db", "/mnt/small", "tmpfs", "tmpfs"},
		{"/mnt/smaller", "/", "ext4", "/dev/sda1"},
		{"/mnt/small/pg/data", "/mnt/small/pg", "tmpfs", "tmpfs"},
		{"/mnt/small disk/data", "/mnt/small disk", "xfs", "/dev/loop1"},
		{"/proc", "/proc", "proc", "proc"},
	}
	for _, tt := range tests {
		mount, fstype, device, err := mountOf(strings.NewReader(mountinfo), tt.path)
		if err != nil || mount != tt.mount || fstype != tt.fstype || device != tt.device {
			t.Errorf("mountOf(%q) = %q, %q, %q, %v; want %q, %q, %q", tt.path, mount, fstype, device, err, tt.mount, tt.fstype, tt.device)
		}
	}
	if _, _, _, err := mountOf(strings.NewReader(""), "/x"); err == nil {
		t.Error("no mount table, no error")
	}
}

// The file system of a real directory is found, with its room.
func TestFileSystemOf(t *testing.T) {
	fs, err := FileSystemOf(t.TempDir())
	if err != nil {
		t.Skipf("no mount table to read here: %v", err)
	}
	if fs.Mount == "" || fs.Type == "" || fs.Size == 0 || fs.Free > fs.Size {
		t.Fatalf("file system %+v", fs)
	}
	note, _ := SpaceNote(fs.Path)
	if !strings.HasPrefix(note, fs.Path+" on "+fs.Mount+" ("+fs.Type+") has ") || !strings.HasSuffix(note, " free now") {
		t.Fatalf("note %q", note)
	}
	if note, low := SpaceNote(""); note != "" || low {
		t.Fatalf("no directory: %q, %v", note, low)
	}
}

func TestLowOnSpace(t *testing.T) {
	for _, tt := range []struct {
		free, size uint64
		low        bool
	}{
		{0, 24 << 20, true},
		{8 << 20, 24 << 20, true}, // under 16 MiB
		{20 << 30, 1 << 40, false},
		{5 << 30, 1 << 40, true}, // under 1%
	} {
		if got := (FileSystem{Free: tt.free, Size: tt.size}).LowOnSpace(); got != tt.low {
			t.Errorf("free %d of %d: low %v, want %v", tt.free, tt.size, got, tt.low)
		}
	}
}

func TestTexts(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KB", 24 << 20: "24 MB", 3 << 30: "3.0 GB"} {
		if got := BytesText(n); got != want {
			t.Errorf("BytesText(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{time.Minute: "60 s", 200 * time.Millisecond: "0.2 s", 90 * time.Second: "90 s"} {
		if got := SecondsText(d); got != want {
			t.Errorf("SecondsText(%v) = %q, want %q", d, got, want)
		}
	}
	for _, tt := range []struct {
		label, msg string
		full       bool
	}{
		{"53100 disk_full", "could not extend file", true},
		{"13 SQLITE_FULL", "database or disk is full", true},
		{"1114 ER_RECORD_FILE_FULL", "The table is full", true},
		{"", "write: no space left on device", true},
		{"8 SQLITE_READONLY", "attempt to write a readonly database", false},
	} {
		if got := LooksFull(tt.label, tt.msg); got != tt.full {
			t.Errorf("LooksFull(%q, %q) = %v", tt.label, tt.msg, got)
		}
	}
}

// Only the part of an outage within the measured part counts.
func TestUnavailableWithinTheSpan(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 13, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	f := Faults{Outages: []result.Outage{{Start: at(-2), End: at(1)}, {Start: at(4), End: at(5.5)}, {Start: at(9), End: at(12), Ongoing: true}}}
	if got := f.unavailable(at(0), at(10)); got != 3500*time.Millisecond {
		t.Fatalf("unavailable %v, want 3.5s", got)
	}
}

type infoDB struct {
	driver.DB
	info driver.Info
}

func (d infoDB) Info() driver.Info { return d.info }

// A database is named by its product and address, never its password.
func TestWhere(t *testing.T) {
	server := infoDB{info: driver.Info{Driver: "postgres", Product: "PostgreSQL", Placement: driver.PlacementServer}}
	for raw, want := range map[string]string{
		"postgres://bench:canary-pw@127.0.0.1:5432/x": "PostgreSQL at 127.0.0.1:5432",
		"postgres://bench@[::1]:5433/x":               "PostgreSQL at [::1]:5433",
		"postgres:///x?host=/run/postgresql":          "PostgreSQL at /run/postgresql",
	} {
		target := parsed(t, raw)
		if got := Where(server, target); got != want {
			t.Errorf("Where(%s) = %q, want %q", raw, got, want)
		}
		if !Local(server, target) {
			t.Errorf("%s is not local", raw)
		}
	}
	embedded := infoDB{info: driver.Info{Driver: "sqlite", Placement: driver.PlacementEmbedded}}
	target := parsed(t, "sqlite:///tmp/x.db")
	// A driver that names no product is named by its driver.
	if got := Where(embedded, target); got != "sqlite" || !Local(embedded, target) {
		t.Errorf("Where(sqlite) = %q", got)
	}
	remote := parsed(t, "postgres://bench@db.example:5432/x")
	if Local(server, remote) {
		t.Error("a remote server is local")
	}
}

func parsed(t *testing.T, raw string) driver.Target {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return driver.Target{Driver: u.Scheme, URL: u}
}

// A fatal failure's advice follows the database's words for it.
func TestFaultAdvice(t *testing.T) {
	for _, c := range []struct{ label, message, want string }{
		{"25006 read_only_sql_transaction", "cannot execute UPDATE in a read-only transaction", "read-only"},
		{"8 SQLITE_READONLY", "attempt to write a readonly database", "read-only"},
		{"1290 ER_OPTION_PREVENTS_STATEMENT", "The MariaDB server is running with the --read-only option", "read-only"},
		{"42501 insufficient_privilege", "permission denied for table usertable", "grant"},
		{"1142 ER_TABLEACCESS_DENIED_ERROR", "UPDATE command denied to user", "grant"},
		{"OOM", "command not allowed when used memory > 'maxmemory'", "limit"},
		{"41823", "database has reached its quota", "limit"},
		{"58030 io_error", "could not write block", ""},
	} {
		got := FaultAdvice(c.label, c.message)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("FaultAdvice(%q, %q) = %q, want it to say %q", c.label, c.message, got, c.want)
		}
	}
}

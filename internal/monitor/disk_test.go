package monitor

import (
	"os"
	"path/filepath"
	"testing"
)

// A device's counters are read in bytes and milliseconds, and a later
// reading less an earlier one is what happened between them.
func TestReadDisk(t *testing.T) {
	root := t.TempDir()
	write := func(text string) {
		if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "proc", "diskstats"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(" 254 0 vda 100 0 2000 40 50 0 800 30 0 60 70\n 7 3 loop3 1 0 8 1 0 0 0 0 0 1 1\n")
	a, err := readDisk(root, "vda")
	if err != nil {
		t.Fatal(err)
	}
	write(" 254 0 vda 110 0 4048 45 60 0 1000 50 0 80 90\n")
	b, err := readDisk(root, "vda")
	if err != nil {
		t.Fatal(err)
	}
	d := b.Sub(a)
	want := DiskCounters{Name: "vda", Reads: 10, Writes: 10, ReadBytes: 2048 * 512, WriteBytes: 200 * 512, ReadMillis: 5, WriteMillis: 20, IOMillis: 20}
	if d != want {
		t.Errorf("difference %+v, want %+v", d, want)
	}
	if _, err := readDisk(root, "loop3"); err == nil {
		t.Error("a device gone from the table was read")
	}
}

// The device of a real directory is found when its file system has one.
func TestDeviceOf(t *testing.T) {
	name, err := DeviceOf(t.TempDir())
	if err != nil {
		t.Skipf("the temporary directory has no block device here: %v", err)
	}
	if _, err := ReadDisk(name); err != nil {
		t.Fatalf("device %s found but not read: %v", name, err)
	}
	if _, err := DeviceOf("/proc"); err == nil {
		t.Error("/proc has a block device")
	}
}

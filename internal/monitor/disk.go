package monitor

import (
	"errors"
	"os"
	"path/filepath"
)

// DiskCounters are one block device's cumulative counters from
// /proc/diskstats, in bytes and milliseconds: what an experiment reads
// before and after a measured part to say what the device holding a
// table did meanwhile (the host sampler's series leave out loop devices,
// which a test's throttled file system is on).
type DiskCounters struct {
	// Name is the device's name in /proc/diskstats ("vda", "loop3").
	Name          string
	Reads, Writes uint64
	ReadBytes     uint64
	WriteBytes    uint64
	ReadMillis    uint64 // time spent on reads, summed over the requests
	WriteMillis   uint64 // the same for writes
	IOMillis      uint64 // time the device had IO in flight
}

// Sub returns c minus an earlier reading of the same device; a counter
// that went down (a 32-bit wrap) counts 0.
func (c DiskCounters) Sub(earlier DiskCounters) DiskCounters {
	d := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return DiskCounters{Name: c.Name, Reads: d(c.Reads, earlier.Reads), Writes: d(c.Writes, earlier.Writes),
		ReadBytes: d(c.ReadBytes, earlier.ReadBytes), WriteBytes: d(c.WriteBytes, earlier.WriteBytes),
		ReadMillis: d(c.ReadMillis, earlier.ReadMillis), WriteMillis: d(c.WriteMillis, earlier.WriteMillis),
		IOMillis: d(c.IOMillis, earlier.IOMillis)}
}

// ReadDisk reads device name's counters now.
func ReadDisk(name string) (DiskCounters, error) {
	return readDisk("", name)
}

func readDisk(root, name string) (DiskCounters, error) {
	data, err := os.ReadFile(filepath.Join(root, "/proc/diskstats"))
	if err != nil {
		return DiskCounters{}, err
	}
	disks := map[string]diskStats{}
	if err := parseDiskstats(data, disks); err != nil {
		return DiskCounters{}, err
	}
	d, ok := disks[name]
	if !ok {
		return DiskCounters{}, errors.New("no device " + name + " in /proc/diskstats")
	}
	return DiskCounters{Name: name, Reads: d.reads, Writes: d.writes,
		ReadBytes: d.sectorsRead * sectorBytes, WriteBytes: d.sectorsWritten * sectorBytes,
		ReadMillis: d.readMillis, WriteMillis: d.writeMillis, IOMillis: d.ioMillis}, nil
}

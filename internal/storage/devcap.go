package storage

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// deviceCap is a write cap the host's cgroups put on a device: cgroup v1
// blkio's throttle.write_bps_device or cgroup v2's io.max wbps, on a group
// that holds processes.
type deviceCap struct {
	// bps is the cap in bytes per second; group the file that sets it.
	bps   float64
	group string
}

// cgroupRoot is where the host's cgroup file systems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// writeCap finds the lowest write cap on the block device named device
// (its /proc/diskstats name) in the cgroup trees under root (cgroupRoot;
// another in tests) and /sys/class/block under sys; ok is false when
// there is none. A throttled device is not busy by its utilisation (the
// cap holds requests back before they reach it), so that a log held at
// its cap shows only as a rate that equals the cap.
func writeCap(root, sys, device string) (c deviceCap, ok bool) {
	num, err := os.ReadFile(filepath.Join(sys, "class", "block", device, "dev"))
	if err != nil || device == "" {
		return c, false
	}
	dev := strings.TrimSpace(string(num))
	// cgroup v2 mounts one tree at the root; v1 one per controller, of
	// which only blkio's (and a hybrid's unified tree) can cap a device.
	trees := []string{filepath.Join(root, "blkio"), filepath.Join(root, "unified")}
	if hasFile(filepath.Join(root, "cgroup.controllers")) {
		trees = []string{root}
	}
	for _, tree := range trees {
		filepath.WalkDir(tree, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			var bps float64
			switch d.Name() {
			case "blkio.throttle.write_bps_device":
				bps = capOf(path, dev, func(fields []string) string { return fields[1] })
			case "io.max":
				bps = capOf(path, dev, func(fields []string) string {
					for _, f := range fields[1:] {
						if v, ok := strings.CutPrefix(f, "wbps="); ok {
							return v
						}
					}
					return ""
				})
			}
			if bps > 0 && (!ok || bps < c.bps) && hasProcesses(filepath.Dir(path)) {
				c, ok = deviceCap{bps: bps, group: filepath.Dir(path)}, true
			}
			return nil
		})
	}
	return c, ok
}

// capOf reads the cap a cgroup file sets on the device numbered dev
// (MAJOR:MINOR), its value picked out of the line's fields by value; 0
// when it sets none ("max").
func capOf(path, dev string, value func(fields []string) string) float64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != dev {
			continue
		}
		if v, err := strconv.ParseFloat(value(fields), 64); err == nil && v > 0 {
			return v
		}
	}
	return 0
}

// hasProcesses says whether a cgroup holds a process: an empty group's
// cap holds nothing back.
func hasProcesses(group string) bool {
	data, err := os.ReadFile(filepath.Join(group, "cgroup.procs"))
	return err == nil && strings.TrimSpace(string(data)) != ""
}

func hasFile(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

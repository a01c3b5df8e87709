package monitor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// sectorBytes is the unit of /proc/diskstats' sector counts: always 512
// bytes, whatever the device's own sector size (see the kernel's
// Documentation/admin-guide/iostats.rst).
const sectorBytes = 512

// hostSampler reads this machine's CPU, disk and memory figures from
// /proc. Each file is read independently: one that cannot be read is noted
// once and the others are still reported.
type hostSampler struct {
	root string // prefix of /proc; "" is the real one
	note func(string)

	noted map[string]bool

	prevTime  time.Time
	prevCPU   cpuTimes
	havePrev  bool
	prevDisks map[string]diskStats
	disks     map[string]diskStats // this reading's, swapped with prevDisks
}

// newHostSampler returns nil, with a note, where there is no /proc to read.
func newHostSampler(root string, note func(string)) *hostSampler {
	if root == "" && runtime.GOOS != "linux" {
		note(fmt.Sprintf("host: not sampled: the host figures come from /proc, which %s does not have", runtime.GOOS))
		return nil
	}
	return &hostSampler{
		root: root, note: note, noted: map[string]bool{},
		prevDisks: map[string]diskStats{}, disks: map[string]diskStats{},
	}
}

// sample reads the files and, when metrics is not nil, adds the figures
// since the previous reading.
func (h *hostSampler) sample(now time.Time, metrics map[string]float64) {
	secs := now.Sub(h.prevTime).Seconds()
	rates := metrics != nil && h.havePrev && secs > 0

	if data, ok := h.read("stat"); ok {
		cpu, err := parseCPU(data)
		if err != nil {
			h.fail("stat", err)
		} else {
			if rates {
				cpuPercents(h.prevCPU, cpu, metrics)
			}
			h.prevCPU = cpu
		}
	}

	if data, ok := h.read("diskstats"); ok {
		clear(h.disks)
		if err := parseDiskstats(data, h.disks); err != nil {
			h.fail("diskstats", err)
		} else {
			if rates {
				diskRates(h.prevDisks, h.disks, secs, metrics)
			}
			h.prevDisks, h.disks = h.disks, h.prevDisks
		}
	}

	if data, ok := h.read("meminfo"); ok {
		mem, err := parseMeminfo(data)
		if err != nil {
			h.fail("meminfo", err)
		} else if metrics != nil {
			metrics["host.mem.available_bytes"] = float64(mem.available)
			metrics["host.mem.used%"] = 100 * float64(mem.total-mem.available) / float64(mem.total)
		}
	}

	h.prevTime, h.havePrev = now, true
}

func (h *hostSampler) read(name string) ([]byte, bool) {
	data, err := os.ReadFile(filepath.Join(h.root, "/proc", name))
	if err != nil {
		h.fail(name, err)
		return nil, false
	}
	return data, true
}

// fail notes a file's failure once: it would fail the same way every second.
func (h *hostSampler) fail(name string, err error) {
	if h.noted[name] {
		return
	}
	h.noted[name] = true
	h.note(fmt.Sprintf("host: /proc/%s: %v", name, err))
}

// cpuTimes is the all-CPUs line of /proc/stat, in clock ticks.
type cpuTimes struct {
	user, nice, system, idle, iowait, irq, softirq, steal uint64
}

// parseCPU reads the "cpu" line of /proc/stat.
func parseCPU(data []byte) (cpuTimes, error) {
	for line := range bytes.Lines(data) {
		fields := strings.Fields(string(line))
		if len(fields) == 0 || fields[0] != "cpu" {
			continue
		}
		// Kernels before 2.6.11 stop after irq/softirq; the idle field
		// is the last one every kernel has.
		if len(fields) < 5 {
			return cpuTimes{}, fmt.Errorf("cpu line has %d values, want at least 4", len(fields)-1)
		}
		var v [8]uint64
		for i := range v {
			if i+1 >= len(fields) {
				break
			}
			n, err := strconv.ParseUint(fields[i+1], 10, 64)
			if err != nil {
				return cpuTimes{}, fmt.Errorf("cpu line: %w", err)
			}
			v[i] = n
		}
		return cpuTimes{user: v[0], nice: v[1], system: v[2], idle: v[3], iowait: v[4], irq: v[5], softirq: v[6], steal: v[7]}, nil
	}
	return cpuTimes{}, errors.New(`no "cpu" line`)
}

// cpuPercents adds the share of the CPUs' time in each state. Guest time
// is already counted in user time by the kernel, so it is not added again;
// nice time is user time; irq and softirq are system time, so the five
// shares add up to 100.
func cpuPercents(prev, cur cpuTimes, metrics map[string]float64) {
	// iowait is known to go backwards on some kernels: a field that went
	// down counts as 0 rather than as a huge unsigned difference.
	d := func(a, b uint64) float64 {
		if b < a {
			return 0
		}
		return float64(b - a)
	}
	user := d(prev.user, cur.user) + d(prev.nice, cur.nice)
	system := d(prev.system, cur.system) + d(prev.irq, cur.irq) + d(prev.softirq, cur.softirq)
	idle := d(prev.idle, cur.idle)
	iowait := d(prev.iowait, cur.iowait)
	steal := d(prev.steal, cur.steal)
	total := user + system + idle + iowait + steal
	if total == 0 {
		return
	}
	// The share before the percent: v/total is at most 1 when v is at
	// most total, while 100*v can round up and overshoot 100 by an ulp.
	metrics["host.cpu.user%"] = 100 * (user / total)
	metrics["host.cpu.system%"] = 100 * (system / total)
	metrics["host.cpu.iowait%"] = 100 * (iowait / total)
	metrics["host.cpu.steal%"] = 100 * (steal / total)
	metrics["host.cpu.idle%"] = 100 * (idle / total)
}

// diskStats is one line of /proc/diskstats: cumulative counts since boot.
type diskStats struct {
	major, minor                               uint64
	reads, sectorsRead, writes, sectorsWritten uint64
	readMillis, writeMillis                    uint64 // time spent on reads and on writes, summed over the requests
	ioMillis                                   uint64 // time the device had IO in flight
	weightedMillis                             uint64 // time in flight summed over the requests
}

// diskstatsFields is how many fields a line has at least: major, minor,
// name and the 11 counters every kernel since 2.6.25 prints (newer ones
// add discard and flush counters after them).
const diskstatsFields = 14

// parseDiskstats reads /proc/diskstats into disks, by device name.
func parseDiskstats(data []byte, disks map[string]diskStats) error {
	for line := range bytes.Lines(data) {
		fields := strings.Fields(string(line))
		if len(fields) == 0 {
			continue
		}
		if len(fields) < diskstatsFields {
			return fmt.Errorf("line %q has %d fields, want at least %d", strings.TrimSpace(string(line)), len(fields), diskstatsFields)
		}
		var v [11]uint64
		for i := range v {
			n, err := strconv.ParseUint(fields[3+i], 10, 64)
			if err != nil {
				return fmt.Errorf("device %q: %w", fields[2], err)
			}
			v[i] = n
		}
		major, err1 := strconv.ParseUint(fields[0], 10, 32)
		minor, err2 := strconv.ParseUint(fields[1], 10, 32)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("device %q: its numbers %s:%s", fields[2], fields[0], fields[1])
		}
		disks[fields[2]] = diskStats{
			major: major, minor: minor,
			reads: v[0], sectorsRead: v[2], readMillis: v[3], writes: v[4], sectorsWritten: v[6], writeMillis: v[7],
			ioMillis: v[9], weightedMillis: v[10],
		}
	}
	return nil
}

// reportedDisk says whether a device's figures are worth a series: it has
// had IO, it is not memory posing as a disk, and it is not a partition of
// a disk that is reported whole (which would count its IO twice).
func reportedDisk(name string, s diskStats, disks map[string]diskStats) bool {
	if s.reads == 0 && s.writes == 0 {
		return false
	}
	for _, prefix := range []string{"loop", "ram", "zram"} {
		if strings.HasPrefix(name, prefix) {
			return false
		}
	}
	parent, ok := partitionOf(name)
	if !ok {
		return true
	}
	_, listed := disks[parent]
	return !listed
}

// partitionOf returns the disk a partition name belongs to by the kernel's
// naming: "sda1" → "sda", "nvme0n1p2" → "nvme0n1" (a 'p' separates the
// partition number when the disk's name ends in a digit). The caller checks
// that the disk exists, since "md0" is no partition of "md".
func partitionOf(name string) (string, bool) {
	base := strings.TrimRight(name, "0123456789")
	if base == name || base == "" {
		return "", false
	}
	if n := len(base); n > 1 && base[n-1] == 'p' && base[n-2] >= '0' && base[n-2] <= '9' {
		return base[:n-1], true
	}
	return base, true
}

// diskRates adds the per-second figures of every reported device seen in
// both readings. A device whose counters went down (they wrap on 32-bit
// kernels) has no figures for that interval.
func diskRates(prev, cur map[string]diskStats, secs float64, metrics map[string]float64) {
	for name, c := range cur {
		p, ok := prev[name]
		if !ok || !reportedDisk(name, c, cur) {
			continue
		}
		if c.reads < p.reads || c.sectorsRead < p.sectorsRead || c.writes < p.writes ||
			c.sectorsWritten < p.sectorsWritten || c.ioMillis < p.ioMillis || c.weightedMillis < p.weightedMillis {
			continue
		}
		prefix := "host.disk." + name + "."
		metrics[prefix+"read_bytes/s"] = float64((c.sectorsRead-p.sectorsRead)*sectorBytes) / secs
		metrics[prefix+"write_bytes/s"] = float64((c.sectorsWritten-p.sectorsWritten)*sectorBytes) / secs
		metrics[prefix+"reads/s"] = float64(c.reads-p.reads) / secs
		metrics[prefix+"writes/s"] = float64(c.writes-p.writes) / secs
		metrics[prefix+"queue_ms/s"] = float64(c.weightedMillis-p.weightedMillis) / secs
		// ms busy per ms elapsed, in percent; a device with several
		// queues can be busy and still take more, so 100% is not a limit.
		metrics[prefix+"util%"] = float64(c.ioMillis-p.ioMillis) / (secs * 1000) * 100
	}
}

// memInfo is what /proc/meminfo says about memory, in bytes.
type memInfo struct {
	total, available uint64
}

// parseMeminfo reads MemTotal and MemAvailable. MemAvailable is the
// kernel's own estimate of what can be allocated without swapping (page
// cache that can be dropped included), which "free" memory is not.
func parseMeminfo(data []byte) (memInfo, error) {
	var mem memInfo
	var haveTotal, haveAvailable bool
	for line := range bytes.Lines(data) {
		key, rest, ok := strings.Cut(string(line), ":")
		if !ok || (key != "MemTotal" && key != "MemAvailable") {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 || len(fields) > 2 || (len(fields) == 2 && fields[1] != "kB") {
			return memInfo{}, fmt.Errorf("%s: want a number of kB, got %q", key, strings.TrimSpace(rest))
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return memInfo{}, fmt.Errorf("%s: %w", key, err)
		}
		if kb > (1<<64-1)/1024 {
			return memInfo{}, fmt.Errorf("%s: %d kB is out of range", key, kb)
		}
		if key == "MemTotal" {
			mem.total, haveTotal = kb*1024, true
		} else {
			mem.available, haveAvailable = kb*1024, true
		}
	}
	switch {
	case !haveTotal:
		return memInfo{}, errors.New("no MemTotal")
	case !haveAvailable:
		return memInfo{}, errors.New("no MemAvailable (it needs Linux 3.14)")
	case mem.total == 0 || mem.available > mem.total:
		return memInfo{}, fmt.Errorf("MemAvailable %d bytes does not fit MemTotal %d bytes", mem.available, mem.total)
	}
	return mem, nil
}

// HostMemory returns this machine's memory (MemTotal) and what can be
// allocated without swapping (MemAvailable, page cache that can be
// dropped included), in bytes, from /proc/meminfo.
func HostMemory() (total, available uint64, err error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, 0, err
	}
	mem, err := parseMeminfo(data)
	if err != nil {
		return 0, 0, err
	}
	return mem.total, mem.available, nil
}

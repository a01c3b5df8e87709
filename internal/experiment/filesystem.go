package experiment

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FileSystem is the file system that holds a path: where it is mounted,
// its type, and its room now.
type FileSystem struct {
	// Path is the path asked about; Mount the mount point that holds it.
	Path, Mount string
	// Device is what is mounted there, as mountinfo names its source:
	// /dev/nvme0n1p1, a network share, "tmpfs", "overlay".
	Device string
	// Type is the file system's type as the kernel names it: ext4, xfs,
	// tmpfs, overlay.
	Type string
	// Free is what an unprivileged writer may still use, in bytes (the
	// superuser's reserve left out); Size the file system's size.
	Free, Size uint64
}

// LowOnSpace reports whether the file system is all but full: less than
// 1% of it or less than 16 MiB free. A database refuses writes well before
// the last byte (PostgreSQL needs whole 16 MB WAL segments, SQLite whole
// pages for its journal), so "full" is a margin, not zero.
func (f FileSystem) LowOnSpace() bool {
	return f.Free < 16<<20 || f.Size > 0 && f.Free < f.Size/100
}

// FileSystemOf finds the file system that holds path: its mount point
// and type from /proc/self/mountinfo, its free space from statfs.
func FileSystemOf(path string) (FileSystem, error) {
	fs := FileSystem{Path: path}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fs, err
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fs, err
	}
	defer f.Close()
	fs.Mount, fs.Type, fs.Device, err = mountOf(f, real)
	if err != nil {
		return fs, err
	}
	fs.Free, fs.Size, err = statfs(real)
	return fs, err
}

// mountOf reads a mountinfo table (proc(5)) and returns the mount point
// that holds path, the longest that is a prefix of it, its type and its
// source (the device); a later mount over the same point hides an
// earlier one.
func mountOf(r io.Reader, path string) (mount, fstype, device string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			continue
		}
		point := unescapeMount(fields[4])
		if within(path, point) && len(point) >= len(mount) {
			mount, fstype, device = point, fields[sep+1], ""
			if sep+2 < len(fields) {
				device = unescapeMount(fields[sep+2])
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", "", err
	}
	if mount == "" {
		return "", "", "", errors.New("no mount point holds " + path)
	}
	return mount, fstype, device, nil
}

// within reports whether path is dir or under it.
func within(path, dir string) bool {
	if dir == "/" || path == dir {
		return true
	}
	return strings.HasPrefix(path, dir+"/")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// BytesText says a size as people read it: 0 B, 900 KB, 12 MB, 3.4 GB
// (powers of 1024, one decimal below 10).
func BytesText(n uint64) string {
	units := []string{"B", "KB", "MB", "GB", "TB", "PB"}
	v := float64(n)
	u := 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 || v >= 10 {
		return strconv.FormatFloat(v, 'f', 0, 64) + " " + units[u]
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[u]
}

package storage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/result"
)

// cooler makes a table cold for a scan: read from the device, not from a
// cache. Two caches stand between a scan and the device: the database's
// own (shared buffers, the buffer pool), which a table larger than it
// cannot stay in and which --restart-cmd empties, and the operating
// system's page cache on the database's host, from which dbprobe evicts
// the table's files when that host is this machine.
type cooler struct {
	// files are the table's files on this machine; nil when not known.
	files []string
	// local says the database's files are on this machine.
	local bool
	// root says dbprobe may drop the whole page cache.
	root bool
	// filesWhy says why the files are not known.
	filesWhy string
}

// tableFiles returns path and the files beside it that continue or
// accompany it: its numbered segments (NAME.1, NAME.2: a database that
// splits a large table names them so), its maps (NAME_fsm) and its
// journal (NAME-wal, whose pages a reader takes before the file's).
func tableFiles(path string) []string {
	files := []string{path}
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return files
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base)
		if !ok || rest == "" || !strings.ContainsRune("._-", rune(rest[0])) || !e.Type().IsRegular() {
			continue
		}
		files = append(files, filepath.Join(dir, e.Name()))
	}
	return files
}

// canEvict says whether the OS page cache can be emptied of the table.
func (c *cooler) canEvict() bool { return c.local && (len(c.files) > 0 || c.root) }

// cannotEvict says why the OS page cache cannot be emptied of the table.
func (c *cooler) cannotEvict() string {
	if !c.local {
		return "the database is not on this machine: dbprobe cannot evict the table from its host's page cache (a table larger than the host's memory cannot stay in it)"
	}
	return "dbprobe does not know the table's files (" + c.filesWhy + ") and is not root, so it can neither evict them from the page cache nor drop the page cache; run as root, or give a table larger than the host's memory"
}

// evict empties the OS page cache of the table: posix_fadvise DONTNEED on
// each of its files, after fdatasync so that no page is kept for being
// dirty; or, when its files are not known, drop_caches as root. It
// returns what it did, in words.
func (c *cooler) evict() (string, error) {
	if !c.local {
		return "", nil
	}
	if len(c.files) > 0 {
		var total int64
		for _, f := range c.files {
			n, err := fadviseDontNeed(f)
			if err != nil {
				return "", err
			}
			total += n
		}
		return fmt.Sprintf("evicted %s, %s", result.Plural(len(c.files), "file"), result.BytesText(total)), nil
	}
	if c.root {
		unix.Sync()
		if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("1"), 0); err != nil {
			return "", fmt.Errorf("dropping the page cache: %w", err)
		}
		return "dropped the OS page cache", nil
	}
	return "", nil
}

// fadviseDontNeed evicts one file from the page cache and returns its
// size.
func fadviseDontNeed(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("evicting %s from the page cache: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	fd := int(f.Fd())
	// Dirty pages are not dropped; written back first, they are.
	if err := unix.Fdatasync(fd); err != nil {
		return 0, fmt.Errorf("fdatasync %s: %w", path, err)
	}
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		return 0, fmt.Errorf("posix_fadvise %s: %w", path, err)
	}
	return st.Size(), nil
}

// restartTimeout bounds --restart-cmd and the wait for the database to
// answer again after it.
const restartTimeout = 5 * time.Minute

// runRestart runs --restart-cmd through sh -c; its output is in the
// error when it fails.
func runRestart(ctx context.Context, cmdText string) error {
	ctx, cancel := context.WithTimeout(ctx, restartTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", cmdText)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: --restart-cmd %q failed (%w): %s; the table is dropped, the scan not run", ErrRunFailed, cmdText, err, outputTail(out))
	}
	return nil
}

// outputTail is the last lines of a command's output for an error: what
// it said last is why it failed.
func outputTail(out []byte) string {
	s := strings.TrimSpace(string(out))
	if s == "" {
		return "it printed nothing"
	}
	const keep = 400
	if len(s) > keep {
		s = "…" + s[len(s)-keep:]
	}
	return "it printed: " + strings.Join(strings.Fields(s), " ")
}

// cacheFactor is how many times the database's own cache a scan's table
// is by default: twice, so that a pass cannot leave more than half of it
// there for the next one (a cache keeps the pages read last, and a
// sequential scan of a table larger than it finds none of its first ones).
const cacheFactor = 2

// sizeFromCache reads the database's own cache size: without --size the
// scan's table is cacheFactor times it, DefaultSize at least; with a
// --size not larger than it, the header says the cache may hold the
// table (the proof then shows whether it did). Where the cache size is
// not known, the header says so.
func (j *job) sizeFromCache(ctx context.Context) {
	size, note := j.c.Size, ""
	cs, err := j.cacheSize(ctx)
	switch {
	case err != nil && j.c.sizeDefault:
		note = fmt.Sprintf("--size %s (default): the database's cache size is not known (%v), so the table may not be larger than it; give --size above it", SizeText(size), err)
	case err != nil:
		note = fmt.Sprintf("--size %s: the database's cache size is not known (%v), so whether it can hold the table is not known", SizeText(size), err)
	case j.c.sizeDefault && cacheFactor*cs.Bytes > size:
		size = cacheFactor * cs.Bytes
		note = fmt.Sprintf("--size %s (default): twice the database's cache (%s: %s)", SizeText(size), cs.How, SizeText(cs.Bytes))
	case j.c.sizeDefault:
		note = fmt.Sprintf("--size %s (default): twice the database's cache (%s: %s) is less than %s, the least a default scan takes", SizeText(size), cs.How, SizeText(cs.Bytes), SizeText(size))
	case size <= cs.Bytes:
		note = fmt.Sprintf("--size %s is not larger than the database's cache (%s: %s): the cache may hold the whole table between passes; the proof below shows whether the scan read it from storage (give --size above %s for a cold read)", SizeText(size), cs.How, SizeText(cs.Bytes), SizeText(cacheFactor*cs.Bytes))
	case size < cacheFactor*cs.Bytes:
		note = fmt.Sprintf("--size %s is less than twice the database's cache (%s: %s): a pass may find part of the table there from the last one", SizeText(size), cs.How, SizeText(cs.Bytes))
	default:
		note = fmt.Sprintf("--size %s is larger than twice the database's cache (%s: %s)", SizeText(size), cs.How, SizeText(cs.Bytes))
	}
	j.c.Size = size
	for i := range j.c.Flags {
		if j.c.Flags[i].Key == "size" && j.c.sizeDefault {
			j.c.Flags[i].Value, j.c.Flags[i].Source = SizeText(size), "default: twice the database's cache, 1GB at least"
		}
	}
	j.notes = append(j.notes, "scan: "+note)
}

// cacheSize asks the database for its cache's size.
func (j *job) cacheSize(ctx context.Context) (driver.CacheSize, error) {
	cz, ok := j.db.(driver.CacheSizer)
	if !ok || !j.caps.OK(driver.CapCacheSize) {
		why := j.caps.Support(driver.CapCacheSize).Note
		if why == "" {
			why = "the driver does not read it"
		}
		return driver.CacheSize{}, fmt.Errorf("%s has no %s: %s", j.caps.Database, driver.CapCacheSize, why)
	}
	cs, err := cz.CacheSize(ctx)
	if err != nil {
		return cs, fmt.Errorf("reading it failed: %s", j.target.ScrubError(err))
	}
	return cs, nil
}

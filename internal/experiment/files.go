package experiment

import (
	"fmt"
	"math"
	"os"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/result"
)

// filesReserve are the files dbprobe opens beside the sessions' own: the
// driver's writer and pool, the monitor, --out, --hlog and the like.
const filesReserve = 64

// CheckFiles refuses, before the database is opened (before a SQLite
// file is created), a phase whose sessions need more open files in
// dbprobe's own process than its limit (RLIMIT_NOFILE) allows: a database
// that runs inside dbprobe holds its files in each session
// (driver.Profile.FilesPerSession), and thousands of threads would
// otherwise spend minutes opening them and fail at "too many open files".
// what asks for the sessions ("--threads 20000") and fewer says how to
// ask for fewer; a driver that says nothing of its files is let through.
func CheckFiles(t *Target, what, fewer string, sessions int) error {
	p, ok := driver.ProfileOf(t.Target)
	if !ok || p.FilesPerSession <= 0 {
		return nil
	}
	soft, hard, ok := fileLimit()
	if !ok {
		return nil
	}
	open := openFiles()
	need := uint64(sessions)*uint64(p.FilesPerSession) + uint64(open) + filesReserve
	if need <= soft {
		return nil
	}
	raise := fmt.Sprintf("raise the limit (ulimit -n %d in the shell that starts dbprobe)", need)
	if need > hard {
		raise = fmt.Sprintf("raise the hard limit first (ulimit -Hn %d, as root or in /etc/security/limits.conf)", need)
	}
	hardText := "unlimited"
	if hard != math.MaxUint64 {
		hardText = result.Grouped(int64(min(hard, math.MaxInt64)))
	}
	return badinput.New("%s needs about %s open files in dbprobe's own process, where %s runs (%d a session: %s; %d open now; %d for the rest), but its limit is %s (RLIMIT_NOFILE soft; hard %s; `ulimit -n` shows it): %s, or %s",
		what, result.Grouped(int64(need)), p.Database, p.FilesPerSession, p.Files, open, filesReserve, result.Grouped(int64(soft)), hardText, fewer, raise)
}

// openFiles counts the files dbprobe has open now, where the system lists
// them; 0 where it does not.
func openFiles() int {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		if e, err := os.ReadDir(dir); err == nil {
			return len(e)
		}
	}
	return 0
}

package durability

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/result"
)

// Report is the outcome of a check: printed as it goes, and written with
// --out as the common JSON result (see Output).
type Report struct {
	Database   string
	Server     string
	Durability driver.Durability
	Settings   []driver.Setting
	Writers    int
	// Cycles is how many cycles were asked for.
	Cycles     int
	CrashAfter string
	Seed       uint64
	// Results holds one entry per crash cycle that ran.
	Results []result.Cycle
	// Acknowledged and Lost are over every cycle; Lost counts the rows
	// missing at the last check, earlier cycles' included.
	Acknowledged int
	Lost         int
	// TailCycles and ScatteredCycles count the cycles whose lost rows were
	// the most recent acknowledged, or not.
	TailCycles      int
	ScatteredCycles int
	Interrupted     bool
	// Caveat says what a process kill cannot reveal for this database and
	// setting.
	Caveat string
}

// analyse compares the client log with the keys the restarted database
// holds, for the rows of cycle; acks are in the order they arrived.
//
// The loss is a tail when every writer lost only its most recent
// acknowledged commits. That is judged per writer because a writer's
// commits follow each other in the log, while the order in which
// different writers' acknowledgements reach the client log is not
// exactly their order in the database's log: a writer that lost a commit
// and kept a later one is a real hole, which no prefix of a log explains.
//
// earlierMissing counts the rows of earlier cycles missing at this check;
// Report.add turns it into the cycle's EarlierLost.
func analyse(cycle int, acks []ackEntry, present map[string]bool, killedAt time.Time) (c result.Cycle, earlierMissing int) {
	c = result.Cycle{Phase: Phase, Number: cycle, Pattern: result.PatternNone}
	prefix := cyclePrefix(cycle)
	acked := map[string]bool{}
	lostBy := map[string]bool{} // writers that lost a commit
	hole := false
	var oldestLost time.Time
	n := 0
	for _, a := range acks {
		if !strings.HasPrefix(a.key, prefix) {
			if a.key < prefix && !present[a.key] {
				earlierMissing++
			}
			continue
		}
		acked[a.key] = true
		n++
		writer := writerOf(a.key)
		if present[a.key] {
			if lostBy[writer] {
				hole = true
			}
			continue
		}
		if c.Lost == 0 {
			oldestLost = a.at
			c.FirstLostPosition = n
		}
		c.Lost++
		lostBy[writer] = true
	}
	c.Acknowledged = n
	for k := range present {
		if strings.HasPrefix(k, prefix) && !acked[k] {
			c.UnacknowledgedPresent++
		}
	}
	if c.Lost == 0 {
		return c, earlierMissing
	}
	if !killedAt.IsZero() {
		c.LostWindow = killedAt.Sub(oldestLost)
	}
	c.Pattern = result.PatternTail
	if hole {
		c.Pattern = result.PatternScattered
	}
	return c, earlierMissing
}

// writerOf returns the writer part of a row key (w003 in c0001-w003-…).
func writerOf(key string) string {
	parts := strings.SplitN(key, "-", 3)
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// add folds a cycle into the totals, setting its EarlierLost. Every check
// looks at every row acknowledged so far, so Lost is what the latest
// check found missing.
func (r *Report) add(c *result.Cycle, earlierMissing int) {
	c.EarlierLost = earlierMissing - r.Lost
	r.Lost = earlierMissing + c.Lost
	r.Acknowledged += c.Acknowledged
	r.Results = append(r.Results, *c)
	switch c.Pattern {
	case result.PatternTail:
		r.TailCycles++
	case result.PatternScattered:
		r.ScatteredCycles++
	}
}

// Verdict judges the check: it fails when a loss was scattered (a hole no
// setting explains), or when writes were lost under full or server
// durability, neither of which lets a process kill take an acknowledged
// commit (the servers' defaults flush before acknowledging; SQLite's
// NORMAL in WAL mode leaves the commit in the OS page cache, which the
// kill spares). verdict says it in a sentence that starts with "passed",
// "failed" or "not judged".
func (r *Report) Verdict() (passed bool, verdict string) {
	return judge(r.Durability, len(r.Results), r.Acknowledged, r.Lost, r.ScatteredCycles)
}

func judge(d driver.Durability, cycles, acknowledged, lost, scattered int) (bool, string) {
	switch {
	case cycles == 0:
		return false, "not judged: no cycle was checked"
	case scattered > 0:
		return false, fmt.Sprintf("failed: acknowledged writes were lost out of order in %d cycles (a writer lost a commit and kept a later one)", scattered)
	case lost > 0 && d != driver.DurabilityDelayed:
		return false, fmt.Sprintf("failed: %d of %d acknowledged writes lost under %s durability", lost, acknowledged, d)
	case lost > 0:
		return true, fmt.Sprintf("passed: %d of %d acknowledged writes lost, only each writer's most recent (a tail), as %s durability allows", lost, acknowledged, d)
	}
	return true, fmt.Sprintf("passed: none of %d acknowledged writes lost", acknowledged)
}

// Caveat says what a process kill proves, and what it cannot, for a
// database at a durability setting.
func Caveat(db Database, d driver.Durability) string {
	switch db {
	case Postgres:
		if d == driver.DurabilityDelayed {
			return "PostgreSQL synchronous_commit=off acknowledges a commit before its WAL is flushed: a process kill loses what the WAL writer had not yet written (measured above); an OS crash or power loss can also lose WAL written but not yet flushed, up to about three times wal_writer_delay, which a process kill cannot reveal"
		}
		return "PostgreSQL synchronous_commit=on acknowledges a commit after its WAL is flushed: 0 lost shows the server keeps that promise across a process kill; whether the storage keeps its own (fsync reaching stable media through power loss) a process kill cannot reveal"
	case MariaDB:
		if d == driver.DurabilityDelayed {
			return "MariaDB innodb_flush_log_at_trx_commit=2 writes the log to the OS at each commit and flushes it about once a second: a process kill loses nothing, an OS crash or power loss can lose about the last second of acknowledged commits. A process kill cannot reveal that: 0 lost here proves nothing about power loss"
		}
		return "MariaDB innodb_flush_log_at_trx_commit=1 flushes the log before acknowledging a commit: 0 lost shows the server keeps that promise across a process kill; whether the storage keeps its own (fsync reaching stable media through power loss) a process kill cannot reveal"
	default:
		switch d {
		case driver.DurabilityFull:
			return "SQLite synchronous=FULL syncs the WAL at every commit: 0 lost shows commits survive a process kill; whether the storage keeps fsync's promise through power loss a process kill cannot reveal"
		case driver.DurabilityDelayed:
			return "SQLite synchronous=OFF never syncs: a commit is in the OS page cache when acknowledged, which survives a process kill and not an OS crash or power loss. A process kill cannot reveal that: 0 lost here proves nothing about power loss"
		default:
			return "SQLite synchronous=NORMAL in WAL mode syncs only at checkpoints: a commit survives a process kill, not necessarily an OS crash or power loss. A process kill cannot reveal that: 0 lost here proves nothing about power loss"
		}
	}
}

func writeHeader(w io.Writer, r *Report) {
	what := "a server dbprobe started on 127.0.0.1"
	if r.Database == SQLite.String() {
		what = "a new file, written by a dbprobe child process"
	}
	fmt.Fprintf(w, "dbprobe durability: %s (%s; %s), durability %s, %d writers, %d crash cycles, SIGKILL %s after each cycle's first commit (seed %d)\n",
		r.Database, r.Server, what, r.Durability, r.Writers, r.Cycles, r.CrashAfter, r.Seed)
	for _, s := range r.Settings {
		fmt.Fprintf(w, "setting: %s = %s\n", s.Name, s.Value)
	}
}

func writeCycle(w io.Writer, c result.Cycle) {
	fmt.Fprintf(w, "cycle %d: killed after %.2f s; %d acknowledged, %d lost", c.Number, millis(c.CrashAfter)/1000, c.Acknowledged, c.Lost)
	switch c.Pattern {
	case result.PatternTail:
		fmt.Fprintf(w, " (a tail: each writer lost only its most recent; the oldest lost was acknowledged %.1f ms before the kill, %d of %d)", millis(c.LostWindow), c.FirstLostPosition, c.Acknowledged)
	case result.PatternScattered:
		fmt.Fprintf(w, " (SCATTERED: a writer lost a commit and kept a later one; the oldest lost was acknowledged %.1f ms before the kill, %d of %d)", millis(c.LostWindow), c.FirstLostPosition, c.Acknowledged)
	}
	if c.EarlierLost > 0 {
		verb := "are"
		if c.EarlierLost == 1 {
			verb = "is"
		}
		fmt.Fprintf(w, "; %s of earlier cycles %s gone", rowCount(c.EarlierLost), verb)
	}
	fmt.Fprintf(w, "; %s committed anyway; restart and check %.2f s\n", rowCount(c.UnacknowledgedPresent, "unacknowledged"), millis(c.Recovery)/1000)
}

// rowCount is "1 row" or "N rows", with the words before "row" in
// between: rowCount(1, "unacknowledged") is "1 unacknowledged row".
func rowCount(n int, words ...string) string {
	noun := "rows"
	if n == 1 {
		noun = "row"
	}
	return strings.Join(append(append([]string{fmt.Sprint(n)}, words...), noun), " ")
}

// millis is a duration in milliseconds to the microsecond, as the text
// report prints it.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func writeTotal(w io.Writer, r *Report) {
	if r.Interrupted {
		fmt.Fprintf(w, "interrupted after %d of %d cycles\n", len(r.Results), r.Cycles)
	}
	pct := 0.0
	if r.Acknowledged > 0 {
		pct = 100 * float64(r.Lost) / float64(r.Acknowledged)
	}
	crashes := "crashes"
	if len(r.Results) == 1 {
		crashes = "crash"
	}
	fmt.Fprintf(w, "total: %d acknowledged writes over %d %s, %d lost (%.3f%%)", r.Acknowledged, len(r.Results), crashes, r.Lost, pct)
	if r.Lost > 0 {
		fmt.Fprintf(w, "; only the most recent (a tail) in %d cycles, scattered in %d", r.TailCycles, r.ScatteredCycles)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "what a process kill proves here: %s\n", r.Caveat)
}

package ycsb

import (
	"fmt"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// phaseStopped is the error of a phase stopped early: its one line is the
// command's last, with exit status 1 as for any phase that failed, or 2
// when the cause is the user's to fix (a privilege the user lacks), as
// when the same failure is found before the phase.
type phaseStopped struct {
	text    string
	userFix bool
}

func (e *phaseStopped) Error() string { return e.text }
func (e *phaseStopped) Unwrap() []error {
	if e.userFix {
		return []error{ErrPhaseFailed, badinput.New("%s", e.text)}
	}
	return []error{ErrPhaseFailed}
}

// failureWords says a failure as the error counts name it, then in the
// database's words: "ERROR(13 SQLITE_FULL) database or disk is full".
func failureWords(err error) string {
	if err == nil {
		return "no error"
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if l := driver.Label(err); l != "" {
		return "ERROR(" + l + ") " + msg
	}
	return msg
}

// progress says what the phase did before it stopped: "after 9,000 of
// 100,000 rows", "after 1,234 of 10,000 operations", "after 1,234
// operations".
func (j *job) progress(ph runner.Phase, out *runner.Outcome) string {
	if ph == runner.Load {
		return fmt.Sprintf("after %s of %s rows", result.Grouped(out.Ops-out.Failed), result.Grouped(j.cfg.Workload.InsertCount))
	}
	if n := j.cfg.Workload.OperationCount; n > 0 {
		return fmt.Sprintf("after %s of %s operations", result.Grouped(out.Ops), result.Grouped(n))
	}
	return fmt.Sprintf("after %s operations", result.Grouped(out.Ops))
}

// stopped describes a phase the runner stopped early: the record for the
// result, whose Text is the command's last line, and the cause in words
// for the verdict.
//
// A fatal failure: "load stopped: ERROR(13 SQLITE_FULL) database or disk
// is full, after 9,000 of 100,000 rows; the table usertable is incomplete
// (left as it is); /tmp/x on /mnt/small (ext4) has 0 B free now: free
// space there, then load again".
//
// A database that did not come back: "PostgreSQL at 127.0.0.1:5432 has not
// answered for 60 s since 13:23:32: the load stops, after 9,000 of 100,000
// rows; the table usertable is incomplete (left as it is); bring the
// server back (or wait longer with --reconnect-timeout), then load again".
func (j *job) stopped(ph runner.Phase, out *runner.Outcome) (*result.Stopped, string) {
	s := out.Stopped
	err := experiment.Scrubbed(j.target.Target, s.Err)
	rec := &result.Stopped{Op: s.Op, At: s.At, Code: driver.Label(s.Err)}
	if err != nil {
		rec.Cause = strings.Join(strings.Fields(err.Error()), " ")
	}
	again := "then " + ph.String() + " again"
	space, low := experiment.SpaceNote(j.dataDir)
	var parts []string
	var words string
	switch s.Cause {
	case runner.StopUnreachable:
		rec.Reason, rec.Since = result.StopUnreachable, s.Since
		where := experiment.Where(j.db, j.target.Target)
		words = fmt.Sprintf("%s did not answer for %s", where, experiment.SecondsText(s.Waited))
		parts = append(parts, fmt.Sprintf("%s has not answered for %s since %s: the %s stops, %s",
			where, experiment.SecondsText(s.Waited), s.Since.Format("15:04:05"), ph, j.progress(ph, out)))
		parts = j.appendTable(parts, ph)
		// The file system is named only when it is nearly full, the likely
		// cause: a server that died for another reason has room to spare,
		// and its free space would only distract.
		if space != "" && low {
			parts = append(parts, space+": free space there and restart the server, "+again)
		} else {
			parts = append(parts, "bring the server back (or wait longer with --reconnect-timeout), "+again)
		}
	default:
		rec.Reason = result.StopFatal
		words = failureWords(err)
		parts = append(parts, fmt.Sprintf("%s stopped: %s, %s", ph, words, j.progress(ph, out)))
		parts = j.appendTable(parts, ph)
		// The data's file system is named only for a full disk: beside a
		// read-only database or a refused permission it would mislead.
		full := low || experiment.LooksFull(rec.Code, rec.Cause)
		advice := experiment.FaultAdvice(rec.Code, rec.Cause)
		switch {
		case space != "" && full:
			parts = append(parts, space+": free space there, "+again)
		case full:
			parts = append(parts, "free space where the database keeps its files, "+again)
		case advice != "":
			parts = append(parts, advice+", "+again)
		default:
			parts = append(parts, "fix what the error says, "+again)
		}
	}
	rec.Text = strings.Join(parts, "; ")
	return rec, words
}

// appendTable says, after a load stopped early, that its table is
// incomplete and left as it is: dbprobe never drops what it loaded.
func (j *job) appendTable(parts []string, ph runner.Phase) []string {
	if ph != runner.Load {
		return parts
	}
	return append(parts, fmt.Sprintf("the table %s is incomplete (left as it is)", j.table.Name))
}

// failing says, for the verdict, the failures more attempts cannot fix
// that a phase went on past (--on-error continue): "91,000 rows failed
// with ERROR(13 SQLITE_FULL) database or disk is full"; "" when none.
func (j *job) failing(ph runner.Phase, out *runner.Outcome) string {
	if out.Fatal == 0 || out.Stopped != nil {
		return ""
	}
	what := "operations"
	if ph == runner.Load {
		what = "rows"
	}
	return fmt.Sprintf("%s %s failed with %s", result.Grouped(out.Fatal), what, failureWords(experiment.Scrubbed(j.target.Target, out.FirstFatal)))
}

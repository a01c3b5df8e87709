package storage

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/monitor"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
)

// readRangeBytes is about how much payload one statement of read
// streams: a range that takes long enough that its round trip is lost in
// it, and short enough that the threads share the table evenly.
const readRangeBytes = 4_000_000

// readSQL is the statement of read: the rows of one key range, payload
// included, in key order. The table's name is a plain identifier
// (driver.CheckIdentifier) and its columns the DataTable's, so the text
// is the same on every SQL database.
func readSQL(table string) string {
	return "SELECT " + driver.DataKeyColumn + ", " + driver.DataPayloadColumn + " FROM " + table +
		" WHERE " + driver.DataKeyColumn + " BETWEEN :lo AND :hi"
}

// read fills the table and streams its rows into the client with each
// --threads value in turn, each thread its own disjoint key ranges, until
// --duration is up for each.
func (j *job) read(ctx context.Context) error {
	t := j.dataTable(j.tableNames()[0])
	if _, err := j.filledTable(ctx, t); err != nil {
		return err
	}
	rows := j.sum.Table.Rows
	j.sum.BytesAre = "row payload received by the client (the payload column's bytes, as the client library hands them over)"
	rangeRows := max(1, readRangeBytes/int64(t.PayloadBytes))
	j.notes = append(j.notes, fmt.Sprintf("read: each thread streams key ranges of %s rows (about %s of payload) with %q, taking the next range not yet read, round and round the table, until --duration %s is up for each --threads value",
		result.Grouped(rangeRows), result.BytesText(rangeRows*int64(t.PayloadBytes)), readSQL(t.Name), j.c.Duration))
	if err := j.startPhase(ctx, j.dataDir); err != nil {
		return err
	}
	sql := j.db.(driver.SQLRunner)
	for _, n := range j.c.Threads {
		if j.halted(ctx) {
			break
		}
		sh := &readShared{sql: sql, text: readSQL(t.Name), rows: rows, op: opOf("READ-RANGE")}
		plan := j.plan(sh.op.Name, 0, runner.Sequence, func(int) runner.Worker { return &readWorker{sh: sh} })
		before := j.ev.read(ctx)
		start := time.Now()
		out, err := j.execute(ctx, plan, n, int(rangeRows), j.c.Duration, func() float64 { return float64(t.PayloadBytes) })
		if err != nil {
			return j.statementError(fmt.Sprintf("reading with %d threads", n), err)
		}
		d := j.ev.read(ctx).since(before)
		j.stepWindow(len(j.sum.Steps), start, time.Now())
		step := result.StorageStep{Label: "threads " + strconv.Itoa(n), Seconds: out.RunTime.Seconds(), Bytes: sh.bytes.Load(), Rows: sh.got.Load(),
			LogBytes: -1, PhysicalBytes: d.read, DeviceReadBytes: d.deviceRead(), DeviceWriteBytes: d.deviceWrite()}
		if step.Seconds > 0 {
			step.Rate = float64(step.Bytes) / step.Seconds
		}
		j.sum.Steps = append(j.sum.Steps, step)
		j.sum.Bytes += step.Bytes
		j.sum.Seconds += step.Seconds
		j.sum.Rows += step.Rows
	}
	j.verdict = j.readVerdict
	return j.finish(ctx)
}

// readVerdict names, for each thread count, what limited it (from the
// monitor's intervals of its window), and says where the curve stops
// growing.
func (j *job) readVerdict(intervals []monitor.Interval) {
	var parts []string
	best, bestAt := 0.0, 0
	for i, w := range j.steps {
		s := &j.sum.Steps[i]
		s.Verdict = readLimit(within(intervals, w), w, j.c.Threads[i], j.info.Placement)
		parts = append(parts, fmt.Sprintf("%s at %s", result.RateText("read", s.Rate), s.Label))
		if s.Rate > best*1.1 {
			best, bestAt = s.Rate, i
		}
	}
	if len(parts) == 0 {
		j.sum.Verdict = "nothing was read"
		return
	}
	v := "read into the client: " + strings.Join(parts, ", ")
	last := len(parts) - 1
	switch {
	case len(parts) > 1 && bestAt < last:
		v += fmt.Sprintf("; the rate stops growing (by 10%% or more) after %s", j.sum.Steps[bestAt].Label)
	case len(parts) > 1:
		v += fmt.Sprintf("; the rate still grows at %s, the last tried: not tested beyond", j.sum.Steps[bestAt].Label)
	}
	// A point measured slower than the best one contradicts "more threads
	// may go faster" said of the best.
	slower := ""
	for i := bestAt + 1; i < len(j.sum.Steps); i++ {
		if j.sum.Steps[i].Rate < 0.9*best {
			slower = j.sum.Steps[i].Label
			break
		}
	}
	stepVerdict := j.sum.Steps[bestAt].Verdict
	if slower != "" && strings.Contains(stepVerdict, moreThreads) {
		stepVerdict = strings.Replace(stepVerdict, moreThreads, ", though "+slower+" measured slower", 1)
	}
	j.sum.Verdict = v + "; " + j.sum.Steps[bestAt].Label + ": " + stepVerdict
}

// moreThreads is the monitor's advice when nothing saturated, which a
// measured drop at more threads contradicts.
const moreThreads = ": more threads may go faster"

// readLimit says whether the client, the network or the server limited a
// read step, from the monitor's diagnosis of its intervals: the client
// when its CPU is saturated, the server when its sessions were busy (on
// CPU or reading), the network (or the round trips) when the server's
// sessions sat idle waiting for the client to take the rows.
func readLimit(intervals []monitor.Interval, w stepWindow, threads int, placement driver.Placement) string {
	d := monitor.Diagnose(intervals, monitor.Phase{Threads: threads, Span: w.end.Sub(w.start), Placement: placement,
		// Each reader streams its rows on one goroutine: one core each.
		ThreadPerCore: placement != driver.PlacementEmbedded})
	sending, sampled := sendingShare(intervals)
	switch {
	case d.Limit == monitor.LimitClient:
		return "client-limited: " + d.Verdict
	case d.Limit != monitor.LimitNotJudged && sampled && sending >= networkShare:
		// The server's sessions are busy, but writing rows into a socket
		// the client side does not drain: with the client's CPU to spare,
		// that is the network between them — unless the host's cores,
		// which a server on this machine shares with the client, are all
		// busy: then the client drains slowly for want of a core.
		if idle, ok := d.Evidence["host.cpu.idle%"]; ok && idle < spareHostIdle {
			return fmt.Sprintf("host CPU-limited: %.0f%% of the database's sampled sessions were sending rows to the client (its socket full), but the host's cores were %.0f%% idle and the client used %.0f%% of a core: the client and what shares its host drain the rows no faster; %s",
				100*sending, idle, d.Evidence["client.cpu%"], d.Verdict)
		}
		return fmt.Sprintf("network-limited: %.0f%% of the database's sampled sessions were sending rows to the client (its socket full) while the client had CPU to spare: the network between them holds the rate", 100*sending)
	}
	switch d.Limit {
	case monitor.LimitClient:
		return "client-limited: " + d.Verdict
	case monitor.LimitServerCPU, monitor.LimitReadIO, monitor.LimitLock, monitor.LimitWriter:
		if placement == driver.PlacementEmbedded {
			// No server: the engine's CPU is dbprobe's own process's.
			return "engine-limited (the engine runs in dbprobe's process, so its CPU is the client's): " + d.Verdict
		}
		return "server-limited: " + d.Verdict
	case monitor.LimitRoundTrip:
		return "network-limited (or round trips): " + d.Verdict
	case monitor.LimitNotJudged:
		return "not judged: " + d.Verdict
	}
	return "no limit saturated: " + d.Verdict
}

// spareHostIdle is the share of the host's CPU time idle (percent) below
// which a client on it has no core to spare for draining its sockets.
const spareHostIdle = 20.0

// networkShare is the share of the database's sampled sessions sending
// rows to the client from which the network is what a read waits on.
const networkShare = 0.5

// sendingShare is the share of the database's sampled active sessions,
// its own and others' (the readers' connections are SQL text's, which
// the monitor may count as others'), that were writing to the client's
// socket: PostgreSQL's Client:ClientWrite, MySQL's "Sending to client"
// and "Writing to net"; sampled is false when none were sampled.
func sendingShare(intervals []monitor.Interval) (share float64, sampled bool) {
	var sending float64
	active, _ := weighedWaits(intervals, func(event string, sessions float64) {
		e := strings.ToUpper(event)
		if strings.Contains(e, "CLIENTWRITE") || strings.Contains(e, "SENDING TO CLIENT") || strings.Contains(e, "WRITING TO NET") {
			sending += sessions
		}
	})
	if active <= 0 {
		return 0, false
	}
	return sending / active, true
}

// within are the intervals whose middle is in w.
func within(intervals []monitor.Interval, w stepWindow) []monitor.Interval {
	var out []monitor.Interval
	for _, iv := range intervals {
		mid := iv.Start.Add(iv.End.Sub(iv.Start) / 2)
		if !mid.Before(w.start) && !mid.After(w.end) {
			out = append(out, iv)
		}
	}
	return out
}

// readShared is what a read step's workers share.
type readShared struct {
	sql  driver.SQLRunner
	text string
	rows int64
	op   runner.Op
	// bytes and got are the payload bytes and rows received.
	bytes, got atomic.Int64
}

// readWorker streams key ranges on a connection of its own.
type readWorker struct {
	sh *readShared
	prepared
	args [2]any
}

func (w *readWorker) Open(ctx context.Context) error { return w.open(ctx, w.sh.sql, w.sh.text) }

// prepared is a worker's own connection and its one prepared statement,
// opened with the worker and closed with it (read's and cache's readers).
type prepared struct {
	conn driver.SQLConn
	st   driver.Stmt
}

// open takes a connection of sql and prepares text on it.
func (p *prepared) open(ctx context.Context, sql driver.SQLRunner, text string) error {
	conn, err := sql.SQLConn(ctx, driver.SQLOptions{})
	if err != nil {
		return err
	}
	st, err := conn.Prepare(ctx, text)
	if err != nil {
		conn.Close()
		return err
	}
	p.conn, p.st = conn, st
	return nil
}

// Close closes the statement and the connection; closing twice is no
// error.
func (p *prepared) Close() error {
	if p.conn == nil {
		return nil
	}
	p.st.Close()
	err := p.conn.Close()
	p.conn = nil
	return err
}

// Step reads the step's range of keys, wrapped round the table.
func (w *readWorker) Step(ctx context.Context, s *runner.Step) {
	lo := s.First()%w.sh.rows + 1
	hi := min(lo+s.N()-1, w.sh.rows)
	var bytes, rows int64
	t0 := measure.Now()
	err := s.Call(ctx, &w.sh.op, func(ctx context.Context) error {
		bytes, rows = 0, 0
		w.args[0], w.args[1] = lo, hi
		if raw, ok := w.conn.(driver.RawRunner); ok {
			// The bytes are counted where they came in, never copied
			// into a value: decoding each payload was most of the
			// client's CPU, which psql's \copy does not spend.
			_, err := raw.RunRaw(ctx, w.st, w.args[:], func(row [][]byte) error {
				rows++
				bytes += int64(len(row[1]))
				return nil
			})
			return err
		}
		_, err := w.conn.Run(ctx, w.st, w.args[:], func(row []any) error {
			rows++
			switch v := row[1].(type) {
			case []byte:
				bytes += int64(len(v))
			case string:
				bytes += int64(len(v))
			}
			return nil
		})
		return err
	})
	s.Finish(&w.sh.op, err, t0, measure.Now(), 0)
	s.Did(hi - lo + 1)
	if err == nil {
		w.sh.bytes.Add(bytes)
		w.sh.got.Add(rows)
	}
}

package ycsb

import (
	"context"
	"fmt"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/replica"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/workload"
)

// Reads sends a run's reads and scans to a replica (--read-db), and
// judges its reads: updates and inserts stay on the primary, and so does
// a read-modify-write, whose read belongs with its write.
type Reads struct {
	// DB is the replica.
	DB driver.DB
	// Tracker stamps the writes and judges the reads.
	Tracker *replica.Tracker
}

// readSession is one worker's share of Reads: its replica session and
// its handle on the tracker. Its methods do nothing on a nil one, so that
// a run without a replica pays one comparison per operation.
type readSession struct {
	db      driver.DB
	sess    driver.Session
	tracker *replica.Worker
	// writing says a write of the current operation was begun.
	writing bool
}

func newReadSession(r *Reads) *readSession {
	if r == nil {
		return nil
	}
	return &readSession{db: r.DB, tracker: r.Tracker.NewWorker()}
}

func (r *readSession) open(ctx context.Context, t driver.Table) error {
	if r == nil {
		return nil
	}
	sess, err := r.db.Session(ctx, t)
	if err != nil {
		return fmt.Errorf("replica (--read-db): %w", err)
	}
	r.sess = sess
	return nil
}

func (r *readSession) close() error {
	if r == nil || r.sess == nil {
		return nil
	}
	sess := r.sess
	r.sess = nil
	return sess.Close()
}

// reader is the session a plain read or scan goes to: the replica's when
// there is one, except for a read-modify-write's read.
func (w *transactor) reader() driver.Session {
	if w.reads == nil || w.op.Kind == workload.ReadModifyWrite {
		return w.sess
	}
	return w.reads.sess
}

// beginRead notes what had been acknowledged of the key a read is about
// to read from the replica.
func (r *readSession) beginRead(op *workload.Op) {
	if r != nil {
		r.tracker.BeginRead(op.KeyNum)
	}
}

// endRead judges the read beginRead began.
func (r *readSession) endRead(op *workload.Op, vals [][]byte, err error) {
	if r != nil {
		r.tracker.EndRead(op.ReadFields, vals, err)
	}
}

// beginWrite stamps the values of an update, insert or read-modify-write
// with a version; other operations pass.
func (r *readSession) beginWrite(op *workload.Op) {
	if r == nil {
		return
	}
	r.writing = false
	switch op.Kind {
	case workload.Update, workload.ReadModifyWrite:
		op.Values = r.tracker.BeginWrite(op.KeyNum, op.WriteFields, op.Values)
	case workload.Insert:
		op.Values = r.tracker.BeginWrite(op.KeyNum, nil, op.Values)
	default:
		return
	}
	r.writing = true
}

// endWrite records the answer to the write beginWrite began.
func (r *readSession) endWrite(_ *workload.Op, err error) {
	if r == nil || !r.writing {
		return
	}
	r.writing = false
	r.tracker.EndWrite(err == nil)
}

// replicaRun is a job's replica: the database, its checked pair with the
// primary, and while a run phase goes its heartbeat and tracker.
type replicaRun struct {
	target *experiment.Target
	db     driver.DB
	pair   replica.Pair
	hb     *replica.Heartbeat
	reads  *Reads
}

// checkReplicaWorkload refuses a workload whose writes cannot carry a
// version stamp: a value shorter than the stamp, or dataintegrity's
// values, which the stamp would break.
func checkReplicaWorkload(s *workload.Spec) error {
	if s.DataIntegrity {
		return badinput.New("--read-db stamps a version into the values updates write, and dataintegrity=true checks values byte for byte; leave one of them out")
	}
	shortest := s.FieldLength
	switch s.FieldLengthDistribution {
	case workload.UniformLength, workload.ZipfianLength:
		shortest = s.MinFieldLength
	case workload.HistogramLength:
		if s.FieldLengthHistogram != nil {
			shortest = s.FieldLengthHistogram.MinLength()
		}
	}
	if shortest < replica.StampLen {
		return badinput.New("--read-db stamps a %d-byte version into every value written, and this workload writes values of %d bytes; use fields of at least %d bytes (fieldlength, minfieldlength)",
			replica.StampLen, shortest, replica.StampLen)
	}
	return nil
}

// connectReplica opens the replica (--read-db) and checks it is a replica
// of the primary, before anything is written anywhere.
func (j *job) connectReplica(ctx context.Context) error {
	if j.c.ReadDB == "" {
		return nil
	}
	if err := checkReplicaWorkload(&j.cfg.Workload); err != nil {
		return err
	}
	tc := j.c.Target
	tc.DB = j.c.ReadDB
	tc.DefaultFile, tc.NoDefault = "", "--read-db needs a URL"
	target, err := experiment.ResolveTarget(tc, j.c.Stderr)
	if err != nil {
		return err
	}
	if target.Driver != j.target.Driver {
		return badinput.New("--read-db %s is a %s database and --db %s a %s one; give a replica of the --db database",
			target.Redacted(), target.Driver, j.target.Redacted(), j.target.Driver)
	}
	db, err := target.Open(ctx, driver.Options{Sessions: j.cfg.Threads, Existing: true, OpPath: j.cfg.OpPath, Durability: driver.DurabilityServer})
	if err != nil {
		return fmt.Errorf("--read-db: %w", err)
	}
	pair, err := replica.Check(ctx, j.db, db, j.target.Redacted(), target.Redacted())
	if err != nil {
		db.Close()
		return experiment.Scrubbed(target.Target, err)
	}
	j.rep.target, j.rep.db, j.rep.pair = target, db, pair
	return nil
}

// closeReplica closes the replica.
func (j *job) closeReplica() {
	if j.rep.db != nil {
		j.rep.db.Close()
	}
}

// startReplica starts a run phase's heartbeat and tracker, after the
// table was checked and before the monitor starts; it returns the
// header's notes.
func (j *job) startReplica(ctx context.Context) ([]string, error) {
	r := &j.rep
	if r.db == nil {
		return nil, nil
	}
	threads := j.cfg.Threads
	if err := experiment.CheckConnections(ctx, r.db, r.target.Target, fmt.Sprintf("--threads %d (on the replica)", threads), "lower --threads", threads, 1); err != nil {
		return nil, err
	}
	epoch, err := replica.NewEpoch(time.Now())
	if err != nil {
		return nil, err
	}
	// The runs going as this one begins, whose stamps may be newer than
	// this run's writes; every other run's are older (Tracker.Settle).
	live, err := replica.LiveEpochs(ctx, r.pair.Primary)
	if err != nil {
		return nil, experiment.Scrubbed(j.target.Target, err)
	}
	name := replica.HeartbeatName(epoch)
	o := replica.DefaultOptions
	if j.loads {
		// The load just done may not be on the replica yet: its reads
		// would find no rows, which no version judges.
		o.CatchUp = catchUpLimit
	}
	hb, err := replica.StartHeartbeat(ctx, r.pair.Primary, r.pair.Replica, name, o)
	if err != nil {
		if hb != nil {
			// Created, then stopped while waiting: the table goes now.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if derr := hb.Drop(dctx); derr != nil {
				fmt.Fprintf(j.c.Stderr, "dbprobe: %v; drop it yourself\n", experiment.Scrubbed(j.target.Target, derr))
			}
		}
		return nil, experiment.Scrubbed(j.target.Target, err)
	}
	r.hb = hb
	// A second interrupt abandons the run: the heartbeat table goes
	// first, as the server settings do.
	j.stops.AtAbandon(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hb.Drop(ctx); err != nil {
			fmt.Fprintf(j.c.Stderr, "dbprobe: %v; drop it yourself\n", experiment.Scrubbed(j.target.Target, err))
		}
	})
	tracker := replica.NewTracker(epoch, j.cfg.Workload.FieldCount, !j.cfg.Workload.ReadAllFields, hb.Origin())
	tracker.Settle(live)
	r.reads = &Reads{DB: r.db, Tracker: tracker}
	var notes []string
	if waited, applied := hb.CaughtUp(); j.loads && applied {
		notes = append(notes, fmt.Sprintf("the replica applied the load %s after it ended; the run started then", experiment.SecondsText(waited)))
	} else if j.loads {
		notes = append(notes, fmt.Sprintf("the replica had not applied the load %s after it ended; the run started anyway, and its reads of rows not there yet fail NOT_FOUND", experiment.SecondsText(waited)))
	}
	return append(notes,
		fmt.Sprintf("reads and scans go to the replica %s; updates, inserts and read-modify-writes to --db", r.target.Redacted()),
		fmt.Sprintf("updates and inserts write a %d-byte version stamp at the start of each field they set; a read of the replica older than an acknowledged update counts as stale", replica.StampLen),
		fmt.Sprintf("replica lag: heartbeat table %s on --db, written every %s and looked for on the replica every %s (every %s for %s after each write); dropped at the end",
			name, replica.DefaultOptions.Interval, replica.DefaultOptions.Poll, replica.DefaultOptions.FinePoll, replica.DefaultOptions.FineFor),
		"the monitor samples --db only",
	), nil
}

// catchUpLimit bounds the wait, after a load in the same command, for the
// replica to apply it before the run starts.
const catchUpLimit = 5 * time.Minute

// endReplica stops the heartbeat, drops its table and returns what the
// phase measured; nil without a replica.
func (j *job) endReplica(ctx context.Context) (*result.ReplicaSummary, error) {
	r := &j.rep
	if r.hb == nil {
		return nil, nil
	}
	lag, seconds := r.hb.Stop()
	hb := r.hb
	r.hb = nil
	sum := replica.Summarize(r.target.Redacted(), r.reads.Tracker.Counts(), lag, seconds)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := hb.Drop(ctx); err != nil {
		return sum, experiment.Scrubbed(j.target.Target, err)
	}
	return sum, nil
}

// replicaSetting is the header's --read-db setting, its password hidden
// (the flags' list leaves it out for that).
func (j *job) replicaSetting(ph runner.Phase) (result.Setting, bool) {
	if j.rep.target == nil || ph != runner.Run {
		return result.Setting{}, false
	}
	return result.Setting{Key: "read-db", Value: j.rep.target.Redacted(), Source: "flag"}, true
}

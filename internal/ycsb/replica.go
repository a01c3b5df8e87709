package ycsb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/replica"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/shard"
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
	db   driver.DB
	sess driver.Session
	// router is sess as a shard.Router when the replicas are shards'.
	router  shard.Router
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
	r.router, _ = sess.(shard.Router)
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

// replicaRun is a job's replica: the database reads go to, its checked
// pairs with the primary, and while a run phase goes their heartbeats and
// the tracker. A sharded job (--shard URL read=REPLICA) has one pair and
// one heartbeat per shard, and reads go to a shard.DB over the replicas,
// with the primaries' ranges.
type replicaRun struct {
	// target is --read-db's; nil for a sharded job.
	target *experiment.Target
	// name is the replica (or the shards' replicas) as the result shows it.
	name string
	db   driver.DB
	// shardDB is db for a sharded job, whose per-shard figures say what
	// each shard's replica answered.
	shardDB *shard.DB
	// members are the databases and targets the replica's connections
	// are checked on: the replica, or each shard's.
	members []shard.Member
	pairs   []replica.Pair
	hbs     []*replica.Heartbeat
	reads   *Reads
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

// connectReplica opens the replica (--read-db, or each shard's read=)
// and checks it is a replica of the primary, before anything is written
// anywhere.
func (j *job) connectReplica(ctx context.Context) error {
	if j.shards != nil {
		return j.connectShardReplicas(ctx)
	}
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
	db, err := target.Open(ctx, j.replicaOptions())
	if err != nil {
		return fmt.Errorf("--read-db: %w", err)
	}
	pair, err := replica.Check(ctx, j.db, db, j.target.Redacted(), target.Redacted())
	if err != nil {
		db.Close()
		return experiment.Scrubbed(target.Target, err)
	}
	r := &j.rep
	r.target, r.name, r.db, r.pairs = target, target.Redacted(), db, []replica.Pair{pair}
	r.members = []shard.Member{{Target: target.Target, DB: db}}
	return nil
}

// replicaOptions are the options a replica is opened with: it is only
// read, and its table must exist.
func (j *job) replicaOptions() driver.Options {
	return driver.Options{Sessions: j.cfg.Threads, Existing: true, OpPath: j.cfg.OpPath, Durability: driver.DurabilityServer}
}

// connectShardReplicas opens each shard's replica (read=) and checks it
// is a replica of that shard's database; the run's reads then go to a
// shard.DB over the replicas, which routes them as the primaries' is.
func (j *job) connectShardReplicas(ctx context.Context) error {
	s := j.shards
	if len(s.readTargets) == 0 || !slices.Contains(j.c.Phases, runner.Run) {
		return nil
	}
	if err := checkReplicaWorkload(&j.cfg.Workload); err != nil {
		return err
	}
	var members []shard.Member
	var pairs []replica.Pair
	closeAll := func() {
		for _, m := range members {
			m.DB.Close()
		}
	}
	primaries := s.db.Members()
	var names []string
	for i, t := range s.readTargets {
		db, err := t.Open(ctx, j.replicaOptions())
		if err != nil {
			closeAll()
			return fmt.Errorf("shard %d's replica: %w", i+1, err)
		}
		members = append(members, shard.Member{Target: t.Target, DB: db, Range: s.ranges[i]})
		pair, err := replica.Check(ctx, primaries[i].DB, db, s.targets[i].Redacted(), t.Redacted())
		if err != nil {
			closeAll()
			err = experiment.Scrubbed(t.Target, err)
			if badinput.Is(err) {
				return badinput.New("shard %d: %s", i+1, err.Error())
			}
			return fmt.Errorf("shard %d: %w", i+1, err)
		}
		pairs = append(pairs, pair)
		names = append(names, t.Redacted()+"@"+s.ranges[i].String())
	}
	r := &j.rep
	r.shardDB = shard.New(members)
	r.name, r.db, r.pairs, r.members = strings.Join(names, ","), r.shardDB, pairs, members
	return nil
}

// closeReplica closes the replica.
func (j *job) closeReplica() {
	if j.rep.db != nil {
		j.rep.db.Close()
	}
}

// dropHeartbeats drops the heartbeat tables started so far, saying on
// stderr which could not be dropped.
func (j *job) dropHeartbeats(ctx context.Context, hbs []*replica.Heartbeat) {
	for i, hb := range hbs {
		if err := hb.Drop(ctx); err != nil {
			fmt.Fprintf(j.c.Stderr, "dbprobe: %v; drop it yourself\n", j.scrubPrimary(i, err))
		}
	}
}

// scrubPrimary hides the password of the primary of pair i in err.
func (j *job) scrubPrimary(i int, err error) error {
	if j.shards != nil {
		return experiment.Scrubbed(j.shards.targets[i].Target, err)
	}
	return experiment.Scrubbed(j.target.Target, err)
}

// startReplica starts a run phase's heartbeats and tracker, after the
// table was checked and before the monitor starts; it returns the
// header's notes.
func (j *job) startReplica(ctx context.Context) ([]string, error) {
	r := &j.rep
	if r.db == nil {
		return nil, nil
	}
	threads := j.cfg.Threads
	for _, m := range r.members {
		if err := experiment.CheckConnections(ctx, m.DB, m.Target, fmt.Sprintf("--threads %d (on the replica)", threads), "lower --threads", threads, 1); err != nil {
			return nil, err
		}
	}
	epoch, err := replica.NewEpoch(time.Now())
	if err != nil {
		return nil, err
	}
	// The runs going as this one begins, whose stamps may be newer than
	// this run's writes; every other run's are older (Tracker.Settle).
	var live []replica.Epoch
	for i, p := range r.pairs {
		l, err := replica.LiveEpochs(ctx, p.Primary)
		if err != nil {
			return nil, j.scrubPrimary(i, err)
		}
		live = append(live, l...)
	}
	name := replica.HeartbeatName(epoch)
	o := replica.DefaultOptions
	if j.loads {
		// The load just done may not be on the replica yet: its reads
		// would find no rows, which no version judges.
		o.CatchUp = catchUpLimit
	}
	var hbs []*replica.Heartbeat
	for i, p := range r.pairs {
		hb, err := replica.StartHeartbeat(ctx, p.Primary, p.Replica, name, o)
		if hb != nil {
			hbs = append(hbs, hb)
		}
		if err != nil {
			// The ones created, this one too when it was stopped while
			// waiting, go now.
			for _, h := range hbs {
				h.Stop()
			}
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			j.dropHeartbeats(dctx, hbs)
			return nil, j.scrubPrimary(i, err)
		}
	}
	r.hbs = hbs
	// A second interrupt abandons the run: the heartbeat tables go
	// first, as the server settings do.
	j.stops.AtAbandon(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		j.dropHeartbeats(ctx, hbs)
	})
	tracker := replica.NewTracker(epoch, j.cfg.Workload.FieldCount, !j.cfg.Workload.ReadAllFields, hbs[0].Origin())
	tracker.Settle(live)
	r.reads = &Reads{DB: r.db, Tracker: tracker}
	var notes []string
	if j.loads {
		var waited time.Duration
		applied := true
		for _, hb := range hbs {
			w, a := hb.CaughtUp()
			waited, applied = max(waited, w), applied && a
		}
		if applied {
			notes = append(notes, fmt.Sprintf("the replica applied the load %s after it ended; the run started then", experiment.SecondsText(waited)))
		} else {
			notes = append(notes, fmt.Sprintf("the replica had not applied the load %s after it ended; the run started anyway, and its reads of rows not there yet fail NOT_FOUND", experiment.SecondsText(waited)))
		}
	}
	where, primary, each, monitored := "the replica "+r.name, "--db", " on --db", "the monitor samples --db only"
	if j.shards != nil {
		where, primary, each, monitored = "each shard's replica (read=)", "the shard's database", " on each shard", "the monitors sample the shards only"
	}
	return append(notes,
		fmt.Sprintf("reads and scans go to %s; updates, inserts and read-modify-writes to %s", where, primary),
		fmt.Sprintf("updates and inserts write a %d-byte version stamp at the start of each field they set; a read of the replica older than an acknowledged update counts as stale", replica.StampLen),
		fmt.Sprintf("replica lag: heartbeat table %s%s, written every %s and looked for on the replica every %s (every %s for %s after each write); dropped at the end",
			name, each, replica.DefaultOptions.Interval, replica.DefaultOptions.Poll, replica.DefaultOptions.FinePoll, replica.DefaultOptions.FineFor),
		monitored,
	), nil
}

// measureReplicaFrom makes the replica's figures cover what the runner's
// do: the reads and heartbeats from the end of the warm-up, which begins
// once the --start-at wait is over. The heartbeats start before both, so
// that the lag is known from the first measured second.
func (j *job) measureReplicaFrom(opts *runner.Options) {
	r := &j.rep
	if r.reads == nil {
		return
	}
	onStart, warmup := opts.OnStart, opts.Warmup
	opts.OnStart = func(start, origin time.Time) {
		from := start.Add(warmup)
		r.reads.Tracker.MeasureFrom(from)
		for _, hb := range r.hbs {
			hb.MeasureFrom(from)
		}
		if onStart != nil {
			onStart(start, origin)
		}
	}
}

// catchUpLimit bounds the wait, after a load in the same command, for the
// replica to apply it before the run starts.
const catchUpLimit = 5 * time.Minute

// endReplica stops the heartbeats, drops their tables and returns what
// the phase measured; nil without a replica.
func (j *job) endReplica(ctx context.Context) (*result.ReplicaSummary, error) {
	r := &j.rep
	if len(r.hbs) == 0 {
		return nil, nil
	}
	hbs := r.hbs
	r.hbs = nil
	counts := r.reads.Tracker.Counts()
	per := make([]*result.ReplicaSummary, len(hbs))
	for i, hb := range hbs {
		lag, seconds := hb.Stop()
		c := replica.Counts{}
		if i == 0 {
			// The tracker's seconds count from the first heartbeat's
			// origin: its counts go with that heartbeat's figures.
			c = counts
		}
		per[i] = replica.Summarize(r.members[i].Target.Redacted(), c, lag, seconds)
	}
	sum := per[0]
	var serr error
	if j.shards != nil {
		sum = result.CombineShardReplicas(r.name, per)
		var answered []result.ShardSummary
		answered, serr = shardSummaries(r.shardDB)
		for i := range answered {
			sum.Shards[i].Answered = &answered[i]
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for i, hb := range hbs {
		if err := hb.Drop(ctx); err != nil {
			return sum, j.scrubPrimary(i, err)
		}
	}
	return sum, serr
}

// replicaSetting is the header's --read-db setting, its password hidden
// (the flags' list leaves it out for that).
func (j *job) replicaSetting(ph runner.Phase) (result.Setting, bool) {
	if j.rep.target == nil || ph != runner.Run {
		// A sharded job's replicas are in its --shard settings.
		return result.Setting{}, false
	}
	return result.Setting{Key: "read-db", Value: j.rep.target.Redacted(), Source: "flag"}, true
}

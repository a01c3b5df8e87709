package ycsb

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/shard"
)

// shards is a sharded job's databases (--shard): each one's resolved
// target and range, and once connected the DB that spreads the table
// over them. The rest of the job sees that DB as its one database and a
// target that names them all; what only makes sense per database (the
// connection check, the monitor, the per-shard figures) is done here.
type shards struct {
	targets []*experiment.Target
	ranges  []shard.Range
	db      *shard.DB
	// readTargets are the shards' replicas (read=), in the same order;
	// empty when reads stay on the shards.
	readTargets []*experiment.Target
}

// sharded reports whether the command spreads the table over shards.
func (c *Config) sharded() bool { return len(c.Shards) > 0 || c.ShardsFile != "" }

// resolveShards reads the shard list, plans the ranges over recordcount
// and resolves every URL, refusing a bad list before any database is
// opened: nothing is written anywhere.
func (j *job) resolveShards(stderr io.Writer) error {
	c := j.c
	if c.Target.DB != "" {
		return badinput.New("--db and --shard both given: a sharded table is reached through --shard alone; leave --db out")
	}
	if c.ReadDB != "" {
		// One replica cannot serve several primaries: each shard names
		// its own.
		return badinput.New("--read-db and --shard both given: give each shard its replica instead, --shard 'URL read=REPLICA_URL' (or a read= column in --shards-file)")
	}
	var specs []shard.Spec
	for _, s := range c.Shards {
		sp, err := shard.ParseSpec(s)
		if err != nil {
			return err
		}
		specs = append(specs, sp)
	}
	if c.ShardsFile != "" {
		more, err := shard.ReadFile(c.ShardsFile)
		if err != nil {
			return err
		}
		specs = append(specs, more...)
	}
	if len(specs) < 2 {
		return badinput.New("one shard given: a sharded table needs two databases or more; for one database use --db")
	}
	s := &shards{}
	var err error
	if s.ranges, err = shard.Plan(specs, j.cfg.Workload.RecordCount); err != nil {
		return err
	}
	var targets, readTargets []driver.Target
	withRead := 0
	for _, sp := range specs {
		if sp.Read != "" {
			withRead++
		}
	}
	if withRead > 0 && withRead < len(specs) {
		return badinput.New("%d of %d --shard values have a read= replica: give every shard its replica, or none", withRead, len(specs))
	}
	for i, sp := range specs {
		tc := c.Target
		tc.DB = sp.URL
		t, err := experiment.ResolveTarget(tc, stderr)
		if err != nil {
			return err
		}
		s.targets = append(s.targets, t)
		targets = append(targets, t.Target)
		if sp.Read == "" {
			continue
		}
		tc.DB = sp.Read
		rt, err := experiment.ResolveTarget(tc, stderr)
		if err != nil {
			return err
		}
		if rt.Driver != t.Driver {
			return badinput.New("shard %d's replica %s is a %s database and the shard %s a %s one; give a replica of the shard's database", i+1, rt.Redacted(), rt.Driver, t.Redacted(), t.Driver)
		}
		s.readTargets = append(s.readTargets, rt)
		readTargets = append(readTargets, rt.Target)
	}
	if err := shard.CheckRepeats(targets); err != nil {
		return err
	}
	if err := shard.CheckRepeats(readTargets); err != nil {
		return badinput.New("read=: %s", err.Error())
	}
	j.shards = s
	// The job's target names every shard; it holds no password of its
	// own, and each shard's errors come scrubbed of theirs (shard.DB).
	var names []string
	for i, t := range s.targets {
		names = append(names, t.Redacted()+"@"+s.ranges[i].String())
	}
	j.target = &experiment.Target{Target: driver.Target{Driver: "shard", URL: &url.URL{Scheme: "shards", Opaque: strings.Join(names, ",")}}}
	return nil
}

// connectShards opens every shard's database and the DB over them.
func (j *job) connectShards(ctx context.Context, opts driver.Options) error {
	s := j.shards
	var members []shard.Member
	for i, t := range s.targets {
		if err := experiment.CheckFiles(t, fmt.Sprintf("--threads %d", j.cfg.Threads), "lower --threads", j.cfg.Threads); err != nil {
			return err
		}
		db, err := t.Open(ctx, opts)
		if err != nil {
			for _, m := range members {
				m.DB.Close()
			}
			return fmt.Errorf("shard %d: %w", i+1, err)
		}
		members = append(members, shard.Member{Target: t.Target, DB: db, Range: s.ranges[i]})
	}
	s.db = shard.New(members)
	j.db = s.db
	return nil
}

// checkShardConnections is experiment.CheckConnections on every shard:
// each server must accept the threads' sessions and its monitor's.
func (j *job) checkShardConnections(ctx context.Context) error {
	if j.shards == nil {
		return nil
	}
	threads := j.cfg.Threads
	for _, m := range j.shards.db.Members() {
		if err := experiment.CheckConnections(ctx, m.DB, m.Target, fmt.Sprintf("--threads %d", threads), "lower --threads",
			threads, experiment.MonitorConnections(j.c.Monitor, m.DB)); err != nil {
			return err
		}
	}
	return nil
}

// startShardMonitors starts one monitor per shard, which sends the
// shard's database figures as shardN.* ("shard2.xact_commit/s"); the
// phase's own monitor, on the DB over the shards, samples dbprobe and the
// host once for all.
func (j *job) startShardMonitors(ctx context.Context, phase string) ([]*experiment.Monitoring, []string) {
	if j.shards == nil {
		return nil, nil
	}
	var mons []*experiment.Monitoring
	var notes []string
	for i, m := range j.shards.db.Members() {
		mc := j.c.Monitor
		mc.Prefix = fmt.Sprintf("shard%d", i+1)
		mon, n := experiment.StartMonitor(ctx, mc, m.DB, m.Target, phase, j.outs)
		mons = append(mons, mon)
		for _, note := range n {
			notes = append(notes, fmt.Sprintf("shard %d %s", i+1, note))
		}
	}
	return mons, notes
}

// alignShardMonitors makes the shards' monitor intervals end on the
// runner's whole seconds too, as PhaseWiring does for the phase's own.
func alignShardMonitors(opts *runner.Options, mons []*experiment.Monitoring) {
	if len(mons) == 0 {
		return
	}
	onStart := opts.OnStart
	opts.OnStart = func(start, origin time.Time) {
		if onStart != nil {
			onStart(start, origin)
		}
		for _, m := range mons {
			m.Align(origin)
		}
	}
}

// shardSummaries are the per-shard figures of the phase just ended, for
// its summary (result.ShardSummary, whose notes say them in words): what
// each shard answered and how long its calls took. The notes are the
// shards' monitors' late notes.
func (j *job) shardSummaries(mons []*experiment.Monitoring) ([]result.ShardSummary, []string, error) {
	if j.shards == nil {
		return nil, nil, nil
	}
	sums, err := shardSummaries(j.shards.db)
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	for i, m := range mons {
		m.Stop()
		for _, n := range m.LateNotes() {
			notes = append(notes, fmt.Sprintf("shard %d %s", i+1, n))
		}
	}
	return sums, notes, nil
}

// shardSummaries takes db's per-shard figures since the last call.
func shardSummaries(db *shard.DB) ([]result.ShardSummary, error) {
	var sums []result.ShardSummary
	for _, st := range db.TakeStats() {
		s := result.ShardSummary{
			Shard: st.Shard, Target: st.Target, Range: st.Range.String(),
			Reads: st.Reads, Updates: st.Updates, Inserts: st.Inserts, Deletes: st.Deletes, Scans: st.Scans,
			Requests: st.Requests, Errors: st.Errors, BusyNanos: st.Busy.Nanoseconds(),
		}
		if err := result.DescribeShardCalls(&s, st.Histogram, st.Requests); err != nil {
			return nil, fmt.Errorf("shard %d: %w", st.Shard, err)
		}
		sums = append(sums, s)
	}
	return sums, nil
}

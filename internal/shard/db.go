package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Member is one shard: its database, opened by the caller, the target it
// was opened from (for messages, with the password hidden) and its range.
type Member struct {
	Target driver.Target
	DB     driver.DB
	Range  Range
}

// DB is one table spread over the members' databases. It owns the
// members' DBs: Close closes them all.
type DB struct {
	members []Member
	// order lists member indexes by First, and firsts their Firsts, for
	// the router's search.
	order  []int
	firsts []int64
	stats  []shardCounters
}

// Router is the optional interface of a session that needs each call's
// record number: Route says that the keys of the next Read, Update,
// Insert, Delete or InsertBatch are records first, first+1, … in order.
// A worker calls it before every such call; Scan needs no route.
type Router interface {
	Route(first int64)
}

// New returns the DB over members, whose ranges Plan made.
func New(members []Member) *DB {
	d := &DB{members: members, stats: make([]shardCounters, len(members))}
	for i := range d.stats {
		d.stats[i].hist = hdr.New(1, highestMicros, 3)
	}
	for i := range members {
		d.order = append(d.order, i)
	}
	slices.SortStableFunc(d.order, func(a, b int) int {
		return int(sign(members[a].Range.First - members[b].Range.First))
	})
	for _, i := range d.order {
		d.firsts = append(d.firsts, members[i].Range.First)
	}
	return d
}

// Members returns the shards in the order given.
func (d *DB) Members() []Member { return d.members }

// shardOf returns the member holding record rec: the one with the largest
// First at or below it (the lowest for a record below every First).
func (d *DB) shardOf(rec int64) int {
	k, found := slices.BinarySearch(d.firsts, rec)
	if !found {
		k--
	}
	return d.order[max(k, 0)]
}

// wrap names the shard an error came from, keeping the error's class for
// the runner's predicates and the shard's password out of its text.
func (d *DB) wrap(i int, err error) error {
	if err == nil {
		return nil
	}
	return &shardError{shard: i, target: d.members[i].Target, err: err}
}

type shardError struct {
	shard  int
	target driver.Target
	err    error
}

func (e *shardError) Error() string {
	return fmt.Sprintf("shard %d (%s): %s", e.shard+1, e.target.Redacted(), e.target.ScrubError(e.err))
}

func (e *shardError) Unwrap() error { return e.err }

// Info describes the shards together: driver "shard", and each shard's
// settings under its number ("shard1.synchronous_commit"). The placement
// is the members' when they agree, a server otherwise.
func (d *DB) Info() driver.Info {
	info := driver.Info{Driver: "shard", Placement: d.members[0].DB.Info().Placement}
	var libs, versions []string
	for i, m := range d.members {
		mi := m.DB.Info()
		libs = append(libs, fmt.Sprintf("%d: %s %s", i+1, mi.Driver, mi.Library))
		if mi.ServerVersion != "" {
			versions = append(versions, fmt.Sprintf("%d: %s", i+1, mi.ServerVersion))
		}
		for _, s := range mi.Settings {
			info.Settings = append(info.Settings, driver.Setting{Name: fmt.Sprintf("shard%d.%s", i+1, s.Name), Value: s.Value})
		}
		if mi.Placement != info.Placement {
			info.Placement = driver.PlacementServer
		}
	}
	info.Library = strings.Join(libs, "; ")
	info.ServerVersion = strings.Join(versions, "; ")
	return info
}

// Inspect inspects the table on every shard. The table exists when it
// exists on every shard and is missing when it is missing on every one;
// anything in between is bad input, since dbprobe will neither create
// half a table nor load beside one it cannot account for. It is
// dbprobe's only if every shard's is, and holds rows if any shard's does.
func (d *DB) Inspect(ctx context.Context, t driver.Table) (driver.TableState, error) {
	var all driver.TableState
	var present, absent []int
	var storage []string
	for i, m := range d.members {
		st, err := m.DB.Inspect(ctx, t)
		if err != nil {
			return driver.TableState{}, d.wrap(i, err)
		}
		if !st.Exists {
			absent = append(absent, i)
			continue
		}
		if len(present) == 0 {
			all = st
			all.HasRows = false
		} else {
			if !slices.EqualFunc(st.Columns, all.Columns, strings.EqualFold) {
				return driver.TableState{}, badinput.New("table %s has columns %s in shard %d but %s in shard %d: give every shard the same table", t.Name,
					strings.Join(st.Columns, ","), i+1, strings.Join(all.Columns, ","), present[0]+1)
			}
			all.CreatedByDbprobe = all.CreatedByDbprobe && st.CreatedByDbprobe
			all.Stateless = all.Stateless && st.Stateless
			if st.Type != all.Type {
				// One phase, one table type: figures over a mix would be
				// labelled with one of them.
				return driver.TableState{}, badinput.New("table %s is a %s table in shard %d but a %s table in shard %d: load every shard with the same --table-type (--drop-existing reloads a table dbprobe created)",
					t.Name, all.Type, present[0]+1, st.Type, i+1)
			}
		}
		if all.OwnershipNote == "" && st.OwnershipNote != "" {
			all.OwnershipNote = fmt.Sprintf("shard %d: %s", i+1, st.OwnershipNote)
		}
		all.HasRows = all.HasRows || st.HasRows
		storage = append(storage, fmt.Sprintf("shard %d: %s", i+1, st.Storage))
		present = append(present, i)
	}
	if len(present) > 0 && len(absent) > 0 {
		return driver.TableState{}, badinput.New("table %s exists in shard %d (%s) but not in shard %d (%s): load every shard together (a new table everywhere), or drop the lone table yourself",
			t.Name, present[0]+1, d.members[present[0]].Target.Redacted(), absent[0]+1, d.members[absent[0]].Target.Redacted())
	}
	all.Storage = strings.Join(storage, "; ")
	return all, nil
}

// CreateTable creates the table on every shard.
func (d *DB) CreateTable(ctx context.Context, t driver.Table) error {
	for i, m := range d.members {
		if err := m.DB.CreateTable(ctx, t); err != nil {
			return d.wrap(i, err)
		}
	}
	return nil
}

// DropTable drops the table on every shard; each driver checks again
// that dbprobe created it there.
func (d *DB) DropTable(ctx context.Context, t driver.Table) error {
	for i, m := range d.members {
		if err := m.DB.DropTable(ctx, t); err != nil {
			return d.wrap(i, err)
		}
	}
	return nil
}

// CheckPrivileges checks every shard that can say (driver.PrivilegeChecker).
func (d *DB) CheckPrivileges(ctx context.Context, t driver.Table, need driver.Access) error {
	for i, m := range d.members {
		if pc, ok := m.DB.(driver.PrivilegeChecker); ok {
			if err := pc.CheckPrivileges(ctx, t, need); err != nil {
				return d.wrap(i, err)
			}
		}
	}
	return nil
}

// RestoreSettings puts back the server-wide settings of every shard that
// changed some (driver.SettingsRestorer).
func (d *DB) RestoreSettings(ctx context.Context) error {
	var errs []error
	for i, m := range d.members {
		if r, ok := m.DB.(driver.SettingsRestorer); ok {
			errs = append(errs, d.wrap(i, r.RestoreSettings(ctx)))
		}
	}
	return errors.Join(errs...)
}

// Session opens one session on every shard.
func (d *DB) Session(ctx context.Context, t driver.Table) (driver.Session, error) {
	s := &Session{db: d, subs: make([]driver.Session, len(d.members)), bufs: make([]scanBuf, len(d.members))}
	for i, m := range d.members {
		sub, err := m.DB.Session(ctx, t)
		if err != nil {
			s.Close()
			return nil, d.wrap(i, err)
		}
		s.subs[i] = sub
	}
	return s, nil
}

// Close closes every shard's DB.
func (d *DB) Close() error {
	var errs []error
	for i, m := range d.members {
		errs = append(errs, d.wrap(i, m.DB.Close()))
	}
	return errors.Join(errs...)
}

// Call kinds counted per shard.
const (
	callRead = iota
	callUpdate
	callInsert // rows, one per record
	callDelete
	callScan // asked of every shard for each scan
	numCalls
)

// highestMicros is the longest call a shard's histogram tells apart (an
// hour); longer ones count as an hour.
const highestMicros = 3_600_000_000

// shardCounters are one shard's running totals and the latency histogram
// of its calls. Shared by every worker: a sharded run talks to real
// databases, where atomic adds and a lock held for one histogram record
// cost nothing beside a round trip (three null shards: 0.09 µs more per
// operation, bench/RESULTS.md).
type shardCounters struct {
	calls    [numCalls]atomic.Int64
	errors   atomic.Int64
	requests atomic.Int64 // session calls: a batch of rows is one
	nanos    atomic.Int64 // time inside the shard's session calls
	mu       sync.Mutex
	hist     *hdr.Histogram // µs per call, guarded by mu
	_        [64]byte       // keep neighbours' counters off this cache line
}

func (c *shardCounters) add(kind int, n int64, start time.Time, err error) {
	d := time.Since(start)
	c.calls[kind].Add(n)
	c.requests.Add(1)
	c.nanos.Add(int64(d))
	if err != nil {
		c.errors.Add(1)
	}
	c.mu.Lock()
	c.hist.RecordValue(min(d.Microseconds(), highestMicros))
	c.mu.Unlock()
}

// Stats is what one shard did since the last TakeStats.
type Stats struct {
	Shard  int // from 1, in the order given
	Target string
	Range  Range
	// Reads, Updates, Deletes are calls; Inserts are rows; Scans are the
	// scans this shard answered (every scan asks every shard).
	Reads, Updates, Inserts, Deletes, Scans int64
	// Requests counts session calls (a batch of rows is one), Errors
	// those that failed; Busy is the time spent in them all.
	Requests, Errors int64
	Busy             time.Duration
	// P50, P99 and Max are the calls' latency percentiles in µs, exact to
	// three significant digits.
	P50, P99, Max int64
	// Histogram is the calls' HDR histogram (µs), in HdrHistogram's
	// compressed V2 encoding, base64, as the result's series carry theirs,
	// so that the calls of several clients merge exactly; "" when there
	// were no calls.
	Histogram string
}

// TakeStats returns each shard's figures since the last call and starts
// counting afresh, so each phase reports its own.
func (d *DB) TakeStats() []Stats {
	out := make([]Stats, len(d.members))
	for i := range d.members {
		c := &d.stats[i]
		out[i] = Stats{
			Shard: i + 1, Target: d.members[i].Target.Redacted(), Range: d.members[i].Range,
			Reads: c.calls[callRead].Swap(0), Updates: c.calls[callUpdate].Swap(0), Inserts: c.calls[callInsert].Swap(0),
			Deletes: c.calls[callDelete].Swap(0), Scans: c.calls[callScan].Swap(0),
			Requests: c.requests.Swap(0), Errors: c.errors.Swap(0), Busy: time.Duration(c.nanos.Swap(0)),
		}
		c.mu.Lock()
		out[i].P50, out[i].P99, out[i].Max = c.hist.ValueAtQuantile(50), c.hist.ValueAtQuantile(99), c.hist.Max()
		if c.hist.TotalCount() > 0 {
			// Encode writes to memory: it cannot fail short of a bug, and a
			// histogram left out only makes dbprobe merge refuse the result.
			if b, err := c.hist.Encode(hdr.V2CompressedEncodingCookieBase); err == nil {
				out[i].Histogram = string(b)
			}
		}
		c.hist.Reset()
		c.mu.Unlock()
	}
	return out
}

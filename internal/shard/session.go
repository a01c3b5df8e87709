package shard

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// ErrNoRoute is returned for a call that needs a record number when the
// caller gave none with Route: guessing a shard would misplace the row.
var ErrNoRoute = errors.New("shard: a keyed call without its record number (Router.Route)")

// Session is one worker's session on every shard. Like any driver session
// it is used by one goroutine; a scan uses the shards' sessions from one
// goroutine each, and waits for them.
type Session struct {
	db   *DB
	subs []driver.Session

	routed bool
	next   int64 // the record of the next keyed call, when routed

	// A batch split over shards remembers how far it committed, so that
	// the runner's retry of the whole batch sends only what did not: the
	// part already committed on one shard would fail as duplicates.
	batchFirst int64
	batchN     int
	batchDone  int

	bufs []scanBuf
}

// Route sets the record number of the next keyed call (Router).
func (s *Session) Route(first int64) { s.next, s.routed = first, true }

// target returns the shard of the routed record and clears the route.
func (s *Session) target() (int, error) {
	if !s.routed {
		return 0, ErrNoRoute
	}
	s.routed = false
	return s.db.shardOf(s.next), nil
}

// Read reads from the shard holding the routed record.
func (s *Session) Read(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	i, err := s.target()
	if err != nil {
		return err
	}
	start := time.Now()
	err = s.subs[i].Read(ctx, key, fields, values)
	s.db.stats[i].add(callRead, 1, start, err)
	return s.db.wrap(i, err)
}

// Update updates on the shard holding the routed record.
func (s *Session) Update(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	i, err := s.target()
	if err != nil {
		return err
	}
	start := time.Now()
	err = s.subs[i].Update(ctx, key, fields, values)
	s.db.stats[i].add(callUpdate, 1, start, err)
	return s.db.wrap(i, err)
}

// Insert inserts on the shard holding the routed record.
func (s *Session) Insert(ctx context.Context, key []byte, values [][]byte) error {
	i, err := s.target()
	if err != nil {
		return err
	}
	start := time.Now()
	err = s.subs[i].Insert(ctx, key, values)
	s.db.stats[i].add(callInsert, 1, start, err)
	return s.db.wrap(i, err)
}

// Delete deletes on the shard holding the routed record.
func (s *Session) Delete(ctx context.Context, key []byte) error {
	i, err := s.target()
	if err != nil {
		return err
	}
	start := time.Now()
	err = s.subs[i].Delete(ctx, key)
	s.db.stats[i].add(callDelete, 1, start, err)
	return s.db.wrap(i, err)
}

// InsertBatch inserts records next, next+1, … (keys[i] is record
// next+i), one transaction per shard the batch touches. Record ranges are
// contiguous, so the batch splits into consecutive parts. A part that
// committed is not sent again when the runner retries the same batch.
func (s *Session) InsertBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	if !s.routed {
		return ErrNoRoute
	}
	s.routed = false
	first := s.next
	from := 0
	if s.batchN == len(keys) && s.batchFirst == first {
		from = s.batchDone // a retry of the batch that failed part-way
	}
	s.batchFirst, s.batchN, s.batchDone = first, len(keys), from
	for from < len(keys) {
		i := s.db.shardOf(first + int64(from))
		to := from + 1
		for to < len(keys) && s.db.shardOf(first+int64(to)) == i {
			to++
		}
		start := time.Now()
		var err error
		if to-from == 1 {
			err = s.subs[i].Insert(ctx, keys[from], values[from])
		} else {
			err = s.subs[i].InsertBatch(ctx, keys[from:to], values[from:to])
		}
		s.db.stats[i].add(callInsert, int64(to-from), start, err)
		if err != nil {
			return s.db.wrap(i, err)
		}
		from = to
		s.batchDone = from
	}
	s.batchN = 0 // done: the same keys again are a new batch
	return nil
}

// scanBuf holds one shard's answer to a scan, copied out of the driver's
// buffers, which are valid only during its visit.
type scanBuf struct {
	keys   [][]byte
	values [][][]byte
	n      int
	err    error
}

func (b *scanBuf) visit(key []byte, values [][]byte) {
	if b.n == len(b.keys) {
		b.keys = append(b.keys, nil)
		b.values = append(b.values, nil)
	}
	b.keys[b.n] = append(b.keys[b.n][:0], key...)
	row := b.values[b.n][:0]
	for j, v := range values {
		if j < cap(row) {
			row = row[:j+1]
			row[j] = append(row[j][:0], v...)
		} else {
			row = append(row, append([]byte(nil), v...))
		}
	}
	b.values[b.n] = row
	b.n++
}

// Scan asks every shard for its next count records from startKey, in
// parallel, and merges the answers in key order (byte order, which is the
// order of YCSB's "user…" keys in every database here): the first count
// of the merge are the first count records from startKey over the whole
// table. Without visit only the number is wanted, which is
// min(count, Σ answers) without merging.
func (s *Session) Scan(ctx context.Context, startKey []byte, count int, fields []int, visit func(key []byte, values [][]byte)) (int, error) {
	one := func(i int) {
		b := &s.bufs[i]
		b.n, b.err = 0, nil
		var v func([]byte, [][]byte)
		if visit != nil {
			v = b.visit
		}
		start := time.Now()
		n, err := s.subs[i].Scan(ctx, startKey, count, fields, v)
		s.db.stats[i].add(callScan, 1, start, err)
		if visit == nil {
			b.n = n
		}
		b.err = s.db.wrap(i, err)
	}
	// The first shard is asked on this goroutine, the others each on
	// one of their own, so all wait on their databases at once.
	var wg sync.WaitGroup
	for i := 1; i < len(s.subs); i++ {
		wg.Go(func() { one(i) })
	}
	one(0)
	wg.Wait()
	total := 0
	var errs []error
	for i := range s.bufs {
		total += s.bufs[i].n
		errs = append(errs, s.bufs[i].err)
	}
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	if visit == nil {
		return min(count, total), nil
	}
	// A k-way merge over a handful of shards: pick the smallest head.
	pos := make([]int, len(s.bufs))
	done := 0
	for done < count {
		best := -1
		for i := range s.bufs {
			if pos[i] < s.bufs[i].n && (best < 0 || bytes.Compare(s.bufs[i].keys[pos[i]], s.bufs[best].keys[pos[best]]) < 0) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		visit(s.bufs[best].keys[pos[best]], s.bufs[best].values[pos[best]])
		pos[best]++
		done++
	}
	return done, nil
}

// Close closes every shard's session.
func (s *Session) Close() error {
	var errs []error
	for i, sub := range s.subs {
		if sub != nil {
			errs = append(errs, s.db.wrap(i, sub.Close()))
		}
	}
	return errors.Join(errs...)
}

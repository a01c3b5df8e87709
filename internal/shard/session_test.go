package shard

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/keygen"
)

// memDB is a table in memory with sorted keys, standing for one database.
type memDB struct {
	rows map[string][][]byte
	// failBatches makes that many InsertBatch calls fail before writing.
	failBatches int
}

func newMem() *memDB { return &memDB{rows: map[string][][]byte{}} }

func (m *memDB) Info() driver.Info { return driver.Info{Driver: "mem"} }
func (m *memDB) Inspect(context.Context, driver.Table) (driver.TableState, error) {
	return driver.TableState{Exists: true, CreatedByDbprobe: true, HasRows: len(m.rows) > 0}, nil
}
func (m *memDB) CreateTable(context.Context, driver.Table) error { return nil }
func (m *memDB) DropTable(context.Context, driver.Table) error   { return nil }
func (m *memDB) Session(context.Context, driver.Table) (driver.Session, error) {
	return &memSession{m}, nil
}
func (m *memDB) Close() error { return nil }

type memSession struct{ m *memDB }

func (s *memSession) Read(_ context.Context, key []byte, _ []int, values [][]byte) error {
	r, ok := s.m.rows[string(key)]
	if !ok {
		return driver.ErrNotFound
	}
	for i := range values {
		values[i] = append(values[i][:0], r[i]...)
	}
	return nil
}

func (s *memSession) Scan(_ context.Context, start []byte, count int, _ []int, visit func([]byte, [][]byte)) (int, error) {
	var keys []string
	for k := range s.m.rows {
		if k >= string(start) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = keys[:min(count, len(keys))]
	if visit != nil {
		for _, k := range keys {
			visit([]byte(k), s.m.rows[k])
		}
	}
	return len(keys), nil
}

func (s *memSession) Update(_ context.Context, key []byte, _ []int, _ [][]byte) error {
	if _, ok := s.m.rows[string(key)]; !ok {
		return driver.ErrNotFound
	}
	return nil
}

func (s *memSession) Insert(_ context.Context, key []byte, values [][]byte) error {
	if _, ok := s.m.rows[string(key)]; ok {
		return fmt.Errorf("duplicate key %s", key)
	}
	row := make([][]byte, len(values))
	for i, v := range values {
		row[i] = slices.Clone(v)
	}
	s.m.rows[string(key)] = row
	return nil
}

func (s *memSession) InsertBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	if s.m.failBatches > 0 {
		s.m.failBatches--
		return errors.New("batch failed")
	}
	for i := range keys {
		if err := s.Insert(ctx, keys[i], values[i]); err != nil {
			return err
		}
	}
	return nil
}

func (s *memSession) Delete(_ context.Context, key []byte) error {
	delete(s.m.rows, string(key))
	return nil
}

func (s *memSession) Close() error { return nil }

func record(n int64) ([]byte, [][]byte) {
	key := []byte(keygen.KeyName(n, true, 1))
	return key, [][]byte{[]byte(fmt.Sprintf("v%d", n))}
}

// shardedMem builds a DB over in-memory shards holding the ranges.
func shardedMem(t *testing.T, ranges ...Range) (*DB, []*memDB, driver.Session) {
	t.Helper()
	var members []Member
	var mems []*memDB
	for _, r := range ranges {
		m := newMem()
		mems = append(mems, m)
		members = append(members, Member{Target: driver.Target{Driver: "mem"}, DB: m, Range: r})
	}
	db := New(members)
	sess, err := db.Session(context.Background(), driver.Table{})
	if err != nil {
		t.Fatal(err)
	}
	return db, mems, sess
}

func TestRoutingAndScanMerge(t *testing.T) {
	ctx := context.Background()
	ranges := []Range{{300, 699}, {0, 299}, {700, Open}} // given out of order
	db, mems, sess := shardedMem(t, ranges...)
	ref := newMem()
	refSess, _ := ref.Session(ctx, driver.Table{})
	r := sess.(Router)

	// Load 1,000 records in batches of 7, which straddle the boundaries,
	// and one by one past the last bound (the run's inserts).
	const records = 1000
	for first := int64(0); first < records; first += 7 {
		var keys [][]byte
		var vals [][][]byte
		for n := first; n < min(first+7, records); n++ {
			k, v := record(n)
			keys, vals = append(keys, k), append(vals, v)
			if err := refSess.Insert(ctx, k, v); err != nil {
				t.Fatal(err)
			}
		}
		r.Route(first)
		if err := sess.InsertBatch(ctx, keys, vals); err != nil {
			t.Fatal(err)
		}
	}
	for n := int64(records); n < records+50; n++ {
		k, v := record(n)
		r.Route(n)
		if err := sess.Insert(ctx, k, v); err != nil {
			t.Fatal(err)
		}
		refSess.Insert(ctx, k, v)
	}
	// Every record is on its shard, and only there.
	for i, rg := range ranges {
		last := rg.Last
		if last == Open {
			last = records + 49
		}
		if got, want := len(mems[i].rows), int(last-rg.First+1); got != want {
			t.Errorf("shard %d (%v) holds %d rows, want %d", i+1, rg, got, want)
		}
		for n := rg.First; n <= last; n++ {
			k, _ := record(n)
			if _, ok := mems[i].rows[string(k)]; !ok {
				t.Fatalf("record %d is not on shard %d (%v)", n, i+1, rg)
			}
		}
	}
	// Keyed calls go to the record's shard.
	vals := make([][]byte, 1)
	for _, n := range []int64{0, 299, 300, 699, 700, 1049} {
		k, v := record(n)
		r.Route(n)
		if err := sess.Read(ctx, k, nil, vals); err != nil || string(vals[0]) != string(v[0]) {
			t.Errorf("read record %d: %q, %v", n, vals[0], err)
		}
	}
	// A keyed call without a route is refused, not guessed.
	k, _ := record(5)
	if err := sess.Read(ctx, k, nil, vals); !errors.Is(err, ErrNoRoute) {
		t.Errorf("unrouted read: %v, want ErrNoRoute", err)
	}

	// Scans from many start keys equal the scan of one database.
	rng := rand.New(rand.NewPCG(1, 2))
	starts := [][]byte{[]byte(""), []byte("user"), []byte("user5"), []byte("user99999999999999999999"), []byte("zzz")}
	for range 200 {
		k, _ := record(rng.Int64N(records + 50))
		starts = append(starts, k)
	}
	for _, start := range starts {
		for _, count := range []int{1, 10, 100, 2000} {
			var got, want []string
			n, err := sess.Scan(ctx, start, count, nil, func(k []byte, v [][]byte) { got = append(got, string(k)+"="+string(v[0])) })
			if err != nil {
				t.Fatal(err)
			}
			refSess.Scan(ctx, start, count, nil, func(k []byte, v [][]byte) { want = append(want, string(k)+"="+string(v[0])) })
			if n != len(got) || !slices.Equal(got, want) {
				t.Fatalf("scan from %q, %d: %d records %v…, one database gives %d %v…", start, count, n, head(got), len(want), head(want))
			}
			if n2, _ := sess.Scan(ctx, start, count, nil, nil); n2 != len(want) {
				t.Fatalf("scan from %q, %d without visit: %d, want %d", start, count, n2, len(want))
			}
		}
	}
	st := db.TakeStats()
	if st[0].Range != ranges[0] || st[1].Inserts != 300 || st[2].Reads != 2 || st[0].Scans == 0 {
		t.Errorf("stats %+v", st)
	}
	if again := db.TakeStats(); again[1].Inserts != 0 {
		t.Errorf("TakeStats did not start afresh: %+v", again[1])
	}
}

func head(s []string) []string { return s[:min(3, len(s))] }

func TestBatchRetrySendsOnlyWhatFailed(t *testing.T) {
	ctx := context.Background()
	_, mems, sess := shardedMem(t, Range{0, 9}, Range{10, Open})
	r := sess.(Router)
	var keys [][]byte
	var vals [][][]byte
	for n := int64(5); n < 15; n++ {
		k, v := record(n)
		keys, vals = append(keys, k), append(vals, v)
	}
	mems[1].failBatches = 1 // the second part fails once
	r.Route(5)
	if err := sess.InsertBatch(ctx, keys, vals); err == nil {
		t.Fatal("the failing part did not fail the batch")
	}
	if len(mems[0].rows) != 5 || len(mems[1].rows) != 0 {
		t.Fatalf("after the failure: %d and %d rows", len(mems[0].rows), len(mems[1].rows))
	}
	// The runner repeats the whole batch: the first part, committed, is
	// not sent again (it would fail as duplicates).
	r.Route(5)
	if err := sess.InsertBatch(ctx, keys, vals); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if len(mems[0].rows) != 5 || len(mems[1].rows) != 5 {
		t.Fatalf("after the retry: %d and %d rows", len(mems[0].rows), len(mems[1].rows))
	}
	// The same keys again are a new batch, which fails as duplicates.
	r.Route(5)
	if err := sess.InsertBatch(ctx, keys, vals); err == nil {
		t.Error("a repeated, completed batch was not sent again")
	}
}

// typedMem is a memDB whose table reports a table type.
type typedMem struct {
	*memDB
	typ driver.TableType
}

func (m typedMem) Inspect(ctx context.Context, t driver.Table) (driver.TableState, error) {
	st, err := m.memDB.Inspect(ctx, t)
	st.Type, st.Columns = m.typ, []string{"YCSB_KEY", "FIELD0"}
	return st, err
}

// absentMem is a memDB without the table.
type absentMem struct{ *memDB }

func (absentMem) Inspect(context.Context, driver.Table) (driver.TableState, error) {
	return driver.TableState{}, nil
}

func TestInspectRefusesMismatchedShards(t *testing.T) {
	ctx := context.Background()
	member := func(db driver.DB, r Range) Member {
		return Member{Target: driver.Target{Driver: "mem"}, DB: db, Range: r}
	}
	tests := []struct {
		name string
		dbs  []driver.DB
		want string
	}{
		{"table types", []driver.DB{typedMem{newMem(), driver.TableDisk}, typedMem{newMem(), driver.TableMemory}}, "load every shard with the same --table-type"},
		{"missing on one", []driver.DB{typedMem{newMem(), driver.TableDisk}, absentMem{newMem()}}, "exists in shard 1 () but not in shard 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := New([]Member{member(tc.dbs[0], Range{0, 9}), member(tc.dbs[1], Range{10, Open})})
			_, err := db.Inspect(ctx, driver.Table{Name: "usertable"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Inspect error %v, want %q", err, tc.want)
			}
		})
	}
	db := New([]Member{member(typedMem{newMem(), driver.TableDisk}, Range{0, 9}), member(typedMem{newMem(), driver.TableDisk}, Range{10, Open})})
	if st, err := db.Inspect(ctx, driver.Table{Name: "usertable"}); err != nil || !st.Exists || st.Type != driver.TableDisk {
		t.Errorf("Inspect of matching shards = %+v, %v", st, err)
	}
}

// slowMem answers reads after a pause, so a shard's percentiles show it.
type slowMem struct{ *memDB }

func (m slowMem) Session(ctx context.Context, t driver.Table) (driver.Session, error) {
	s, err := m.memDB.Session(ctx, t)
	return slowSession{s}, err
}

type slowSession struct{ driver.Session }

func (s slowSession) Read(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	time.Sleep(2 * time.Millisecond)
	return s.Session.Read(ctx, key, fields, values)
}

func TestStatsPerShard(t *testing.T) {
	ctx := context.Background()
	fast, slow := newMem(), newMem()
	db := New([]Member{
		{Target: driver.Target{Driver: "mem"}, DB: fast, Range: Range{0, 9}},
		{Target: driver.Target{Driver: "mem"}, DB: slowMem{slow}, Range: Range{10, Open}},
	})
	sess, err := db.Session(ctx, driver.Table{})
	if err != nil {
		t.Fatal(err)
	}
	r := sess.(Router)
	vals := make([][]byte, 1)
	for n := range int64(20) {
		k, v := record(n)
		r.Route(n)
		if err := sess.Insert(ctx, k, v); err != nil {
			t.Fatal(err)
		}
		r.Route(n)
		if err := sess.Read(ctx, k, nil, vals); err != nil {
			t.Fatal(err)
		}
	}
	r.Route(99) // not loaded: a failed read on the slow shard
	if err := sess.Read(ctx, []byte("user99"), nil, vals); !errors.Is(err, driver.ErrNotFound) {
		t.Fatalf("read of a missing record: %v", err)
	}
	st := db.TakeStats()
	if st[0].Reads != 10 || st[0].Inserts != 10 || st[0].Requests != 20 || st[0].Errors != 0 {
		t.Errorf("fast shard: %+v", st[0])
	}
	if st[1].Reads != 11 || st[1].Inserts != 10 || st[1].Requests != 21 || st[1].Errors != 1 {
		t.Errorf("slow shard: %+v", st[1])
	}
	// Its 11 reads slept 2 ms each, half its calls and more: its p99 and
	// max are 2 ms at least, and its calls took 22 ms in all at least.
	if st[1].P99 < 2000 || st[1].Max < st[1].P99 || st[1].P50 > st[1].P99 || st[1].Busy < 22*time.Millisecond {
		t.Errorf("slow shard's latencies: %+v", st[1])
	}
}

package fleet

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/workload"
)

func TestShareCoversEveryItemOnce(t *testing.T) {
	for _, total := range []int64{1, 7, 10, 1000, 1_000_003} {
		for _, count := range []int{1, 2, 3, 7, 64} {
			if int64(count) > total {
				continue
			}
			next := int64(0)
			for i := range count {
				first, n := Slice{Index: i, Count: count}.Share(total)
				if first != next {
					t.Fatalf("total %d, %d clients: client %d starts at %d, want %d", total, count, i, first, next)
				}
				if base := total / int64(count); n != base && n != base+1 {
					t.Fatalf("total %d, %d clients: client %d takes %d", total, count, i, n)
				}
				next += n
			}
			if next != total {
				t.Fatalf("total %d, %d clients: the parts add up to %d", total, count, next)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		s    Slice
		want string
	}{
		{Slice{Index: 3, Count: 3}, "--client-index 3 is out of range for --client-count 3: give 0 to 2"},
		{Slice{Index: -1, Count: 3}, "--client-index -1 is out of range"},
		{Slice{Index: 0, Count: 0}, "--client-count 0"},
		{Slice{Index: 0, Count: MaxCount + 1}, "--client-count 10001"},
	} {
		err := tt.s.Validate()
		if !badinput.Is(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want bad input with %q", tt.s, err, tt.want)
		}
	}
	if err := (Slice{Index: 2, Count: 3}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func spec() workload.Spec {
	return workload.Spec{RecordCount: 1000, InsertStart: 100, InsertCount: 900, OperationCount: 10}
}

func TestLoadSlicesTheInsertRange(t *testing.T) {
	next := int64(100)
	for i := range 4 {
		s, err := Slice{Index: i, Count: 4}.Load(spec())
		if err != nil {
			t.Fatal(err)
		}
		if s.InsertStart != next {
			t.Fatalf("client %d starts at record %d, want %d", i, s.InsertStart, next)
		}
		next += s.InsertCount
	}
	if next != 1000 {
		t.Fatalf("the clients load up to record %d, want 1000", next)
	}
	if _, err := (Slice{Index: 0, Count: 901}).Load(spec()); !badinput.Is(err) {
		t.Fatalf("901 clients for 900 records: %v, want bad input", err)
	}
}

func TestRunSharesOperationsAndInsertKeys(t *testing.T) {
	var ops int64
	keys := map[int64]int{}
	for i := range 3 {
		s, err := Slice{Index: i, Count: 3}.Run(spec())
		if err != nil {
			t.Fatal(err)
		}
		ops += s.OperationCount
		if s.InsertStart != 100 || s.InsertCount != 900 {
			t.Fatalf("client %d reads records %d+%d: every client reads the whole table", i, s.InsertStart, s.InsertCount)
		}
		for seq := int64(1000); seq < 1100; seq++ {
			k := s.InsertKey(seq)
			if prev, dup := keys[k]; dup {
				t.Fatalf("clients %d and %d both insert key number %d", prev, i, k)
			}
			keys[k] = i
		}
	}
	if ops != 10 {
		t.Fatalf("the clients do %d operations, want 10", ops)
	}
	for k := int64(1000); k < 1300; k++ {
		if _, ok := keys[k]; !ok {
			t.Fatalf("key number %d is nobody's: the clients' inserts leave gaps", k)
		}
	}
	if _, err := (Slice{Index: 0, Count: 11}).Run(spec()); !badinput.Is(err) {
		t.Fatalf("11 clients for 10 operations: %v, want bad input", err)
	}
	time := spec()
	time.OperationCount = 0
	if s, err := (Slice{Index: 1, Count: 11}).Run(time); err != nil || s.OperationCount != 0 {
		t.Fatalf("a run bounded by time: %+v, %v", s, err)
	}
}

func TestTargetAndSeed(t *testing.T) {
	s := Slice{Index: 1, Count: 4}
	if got := s.Target(1000); got != 250 {
		t.Fatalf("target %g, want 250", got)
	}
	if One.Target(1000) != 1000 || One.Seed(5) != 5 {
		t.Fatal("a lone client's target and seed change")
	}
	if a, b := (Slice{Index: 0, Count: 2}).Seed(5), (Slice{Index: 1, Count: 2}).Seed(5); a == b || b-a < 1<<32 {
		t.Fatalf("seeds %d and %d: the clients' workers would draw the same keys", a, b)
	}
}

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)
	if got, err := ParseStartAt("2026-11-27T21:00:30.5+01:00", now); err != nil || !got.Equal(now.Add(30500*time.Millisecond)) {
		t.Fatalf("%v, %v", got, err)
	}
	for _, tt := range []struct{ v, want string }{
		{"2026-11-27T19:59:59Z", "is in the past"},
		{"2026-11-27T20:00:00Z", "is in the past"},
		{"tomorrow", "is not an RFC 3339 time"},
		{"2026-11-27 20:05:00", "is not an RFC 3339 time"},
	} {
		_, err := ParseStartAt(tt.v, now)
		if !badinput.Is(err) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line of bad input with %q", tt.v, err, tt.want)
		}
	}
}

func FuzzParseStartAt(f *testing.F) {
	for _, s := range []string{"2026-11-27T20:00:00Z", "2030-01-01T00:00:00.123456789+05:30", "", "Z", "9999-12-31T23:59:59Z"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		got, err := ParseStartAt(v, now)
		if err == nil && !got.After(now) {
			t.Fatalf("%q accepted as %s, not after now", v, got)
		}
		if err != nil && (!badinput.Is(err) || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("%q: %v is not one line of bad input", v, err)
		}
	})
}

// fakeDB is a database that says its connection room and its clock.
// Its clock readings move a fake client clock (clockNow) by their round
// trip, the first one slow and wrong by an hour: queueing that the
// shortest round trip leaves out.
type fakeDB struct {
	driver.DB
	room   driver.ConnectionRoom
	now    time.Time
	reads  int
	failAt int
}

func (f *fakeDB) ConnectionRoom(context.Context) (driver.ConnectionRoom, error) { return f.room, nil }

func (f *fakeDB) ServerTime(context.Context) (time.Time, error) {
	f.reads++
	if f.reads == f.failAt {
		return time.Time{}, context.DeadlineExceeded
	}
	half, wrong := time.Millisecond, time.Duration(0)
	if f.reads == 1 {
		half, wrong = 15*time.Millisecond, time.Hour
	}
	f.now = f.now.Add(half)
	t := f.now.Add(2*time.Second + wrong)
	f.now = f.now.Add(half)
	return t, nil
}

func (f *fakeDB) ClockQuery() string { return "NOW()" }

func TestCapacity(t *testing.T) {
	s := Slice{Index: 1, Count: 4}
	ctx := context.Background()
	db := &fakeDB{room: driver.ConnectionRoom{Max: 100, InUse: 10, Setting: "max_connections"}}
	if w, err := Capacity(ctx, db, "db", s, 20, 1); err != nil || w != "" {
		t.Fatalf("81 of 100 with 90 free: %q, %v", w, err)
	}
	w, err := Capacity(ctx, db, "db", s, 23, 1)
	if err != nil || !strings.Contains(w, "the 4 clients need 93 connections") || !strings.Contains(w, "accepts 90 more now") {
		t.Fatalf("93 of 100 with 90 free: %q, %v; want a warning", w, err)
	}
	_, err = Capacity(ctx, db, "db", s, 25, 1)
	if !badinput.Is(err) || !strings.Contains(err.Error(), "the 4 clients need 101 connections (4 × --threads 25, and 1 for the monitor), but db accepts at most 100") {
		t.Fatalf("101 of 100: %v, want bad input", err)
	}
	if w, err := Capacity(ctx, db, "db", One, 1000, 1); w != "" || err != nil {
		t.Fatalf("a lone client is checked by its phase, not here: %q, %v", w, err)
	}
}

func TestMeasureOffset(t *testing.T) {
	db := &fakeDB{now: time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)}
	clockNow = func() time.Time { return db.now }
	defer func() { clockNow = time.Now }()
	off, ok, err := MeasureOffset(context.Background(), db)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if db.reads != ClockReadings {
		t.Fatalf("%d readings, want %d", db.reads, ClockReadings)
	}
	if off.Offset != 2*time.Second || off.RTT != 2*time.Millisecond || off.Query != "NOW()" {
		t.Fatalf("offset %s, round trip %s (%s): want 2s from a 2ms round trip, the slow wrong reading left out", off.Offset, off.RTT, off.Query)
	}
	db = &fakeDB{failAt: 3}
	if _, _, err := MeasureOffset(context.Background(), db); err == nil {
		t.Fatal("a failed reading was not reported")
	}
}

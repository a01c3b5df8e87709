// Package drivertest is the conformance suite every database driver runs:
// the behaviour the runner relies on (exact round trips, ErrNotFound,
// ordered scans, safe concurrent sessions, and never dropping a table dbprobe
// did not create), checked the same way for every database.
//
// A driver's test calls Run with a Config that says how to open a fresh
// database:
//
//	func TestConformance(t *testing.T) {
//		drivertest.Run(t, drivertest.Config{
//			Open: func(t *testing.T, opts driver.Options) driver.DB { … },
//		})
//	}
//
// Run creates its tables under names unique to the run ("dbprobe_test_"
// and a random suffix) and drops them at the end, so it can share a
// database with other runs.
package drivertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Config says how to reach a fresh database for the suite.
type Config struct {
	// Open returns an open DB; the suite closes it. Run may call it more
	// than once (a second DB checks InsertBatch with the other BulkLoad), and
	// each DB it returns must reach the same database unless the driver's
	// database is private to a DB, as SQLite's in-memory one is: the suite
	// never expects a table made through one DB to be seen by another.
	Open func(t *testing.T, opts driver.Options) driver.DB
	// CreateForeignTable, when set, creates a table with one row that
	// dbprobe did not create (plain SQL through the driver's own library),
	// so the suite can check that Inspect reports it and DropTable refuses
	// it. The suite cannot drop that table: CreateForeignTable should
	// register its own t.Cleanup when the database outlives the test.
	CreateForeignTable func(t *testing.T, name string)
	// DropBehindDbprobe, when set with CreateForeignTable, drops a table
	// with plain SQL, leaving its row in dbprobe's marker table: the suite
	// drops a table dbprobe created that way, has CreateForeignTable create
	// one under its name, and checks that the marker row does not make the
	// new table dbprobe's.
	DropBehindDbprobe func(t *testing.T, name string)
	// Options are the knobs every DB the suite opens is given (table type,
	// durability, operation path); the suite sets Sessions and BulkLoad
	// itself. A driver runs the suite once per combination it supports.
	Options driver.Options
	// ProvokeConflict, when set, makes the database reject an operation on
	// tbl as a conflict the whole transaction may be retried after (a
	// deadlock, a serialization failure, a write conflict, a busy lock) and
	// returns that operation's error as the driver returned it. The suite
	// checks that it is retryable and carries the database's code.
	ProvokeConflict func(t *testing.T, db driver.DB, tbl driver.Table) error
	// Settings names settings the driver's Info must hold, with a value,
	// under the suite's knobs. SessionSettings are the ones every driver
	// that reads its sessions back reports.
	Settings []string
}

// SessionSettings are the settings that say how a session's operations
// run, which decide conflicts and the cost of each commit: the isolation
// in force for dbprobe's sessions and how each operation is committed.
var SessionSettings = []string{"transaction_isolation", "autocommit"}

// open opens a DB with the suite's knobs.
func (cfg Config) open(t *testing.T, sessions int, bulk bool) driver.DB {
	opts := cfg.Options
	opts.Sessions, opts.BulkLoad = sessions, bulk
	return cfg.Open(t, opts)
}

// The shape of the suite's tables: YCSB's, with its default field length.
const (
	fieldCount  = 10
	fieldLength = 100
	keyLength   = 255
	sessions    = 8
)

// newTable returns a YCSB-shaped table description.
func newTable(name string) driver.Table { return Table(name, fieldCount) }

// Run runs the whole suite against the driver cfg opens.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.Open == nil {
		t.Fatal("drivertest: Config.Open is nil")
	}
	ctx := context.Background()
	suffix := fmt.Sprintf("%08x", rand.Uint32())
	tbl := newTable("dbprobe_test_" + suffix)

	db := cfg.open(t, sessions, true)
	closed := false
	t.Cleanup(func() {
		if !closed {
			// Best effort after a failure: leave no table behind.
			_ = db.DropTable(ctx, tbl)
			_ = db.Close()
		}
	})

	t.Run("Info", func(t *testing.T) { testInfo(t, db.Info(), cfg.Settings) })
	t.Run("Capabilities", func(t *testing.T) { testCapabilities(t, db, suffix) })
	if !t.Run("CreateAndInspect", func(t *testing.T) { testCreateAndInspect(t, db, tbl, cfg.Options.TableType) }) {
		t.Fatal("the table could not be created: the other subtests need it")
	}
	t.Run("InsertReadUpdateDelete", func(t *testing.T) { testCRUD(t, db, tbl) })
	t.Run("NotFound", func(t *testing.T) { testNotFound(t, db, tbl) })
	t.Run("EveryByteRoundTrips", func(t *testing.T) { testEveryByte(t, db, tbl) })
	t.Run("MaxLength", func(t *testing.T) { testMaxLength(t, db, tbl) })
	t.Run("InsertBatch/BulkLoad", func(t *testing.T) { testInsertBatch(t, db, tbl, "bulk") })
	t.Run("InsertBatch/MultiRowInsert", func(t *testing.T) {
		// A second DB, opened without BulkLoad, on a table of its own: its
		// database may be private to it.
		other := cfg.open(t, 1, false)
		defer other.Close()
		own := newTable(tbl.Name + "_multi")
		if err := other.CreateTable(ctx, own); err != nil {
			t.Fatalf("CreateTable(%s) on the second DB: %v", own.Name, err)
		}
		defer func() {
			if err := other.DropTable(ctx, own); err != nil {
				t.Errorf("DropTable(%s) on the second DB: %v", own.Name, err)
			}
		}()
		testInsertBatch(t, other, own, "multi")
	})
	t.Run("Scan", func(t *testing.T) { testScan(t, db, tbl) })
	t.Run("ConcurrentSessions", func(t *testing.T) { testConcurrent(t, db, tbl) })
	t.Run("DuplicateInsert", func(t *testing.T) { testDuplicate(t, db, tbl) })
	t.Run("CanceledContext", func(t *testing.T) { testCanceled(t, db, tbl) })
	if cfg.ProvokeConflict != nil {
		t.Run("ConflictIsRetryable", func(t *testing.T) {
			err := cfg.ProvokeConflict(t, db, tbl)
			if err == nil {
				t.Fatal("ProvokeConflict returned no error")
			}
			if !driver.IsRetryable(err) || driver.Code(err) == "" {
				t.Errorf("conflict %v: class %v, code %q; want a retryable class and the database's code", err, driver.ClassOf(err), driver.Code(err))
			}
		})
	}
	if cfg.CreateForeignTable != nil {
		t.Run("ForeignTable", func(t *testing.T) { testForeign(t, db, cfg, "dbprobe_foreign_"+suffix) })
	}
	if cfg.CreateForeignTable != nil && cfg.DropBehindDbprobe != nil {
		t.Run("ReplacedTable", func(t *testing.T) { testReplaced(t, db, cfg, "dbprobe_replaced_"+suffix) })
	}
	t.Run("DropTable", func(t *testing.T) {
		if err := db.DropTable(ctx, tbl); err != nil {
			t.Fatalf("DropTable(%s): %v", tbl.Name, err)
		}
		st, err := db.Inspect(ctx, tbl)
		if err != nil {
			t.Fatalf("Inspect after DropTable: %v", err)
		}
		if st.Exists || st.CreatedByDbprobe {
			t.Errorf("Inspect after DropTable = %+v, want a table that neither exists nor is recorded", st)
		}
	})
	t.Run("Close", func(t *testing.T) {
		closed = true
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}

// openSession opens a session and closes it when the test ends.
func openSession(t *testing.T, db driver.DB, tbl driver.Table) driver.Session {
	t.Helper()
	s, err := db.Session(context.Background(), tbl)
	if err != nil {
		t.Fatalf("Session(%s): %v", tbl.Name, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Session.Close: %v", err)
		}
	})
	return s
}

// record builds n field values for a key, each distinct and fieldLength
// bytes long, so that a value read from the wrong field or record shows.
func record(key string, n int) [][]byte {
	values := make([][]byte, n)
	for i := range values {
		v := fmt.Sprintf("%s|field%d|", key, i)
		values[i] = []byte(pad(v, fieldLength))
	}
	return values
}

// pad repeats a printable pattern after s up to n bytes, or cuts s to n.
func pad(s string, n int) string {
	const pattern = "abcdefghijklmnopqrstuvwxyz0123456789"
	for len(s) < n {
		s += pattern[:min(len(pattern), n-len(s))]
	}
	return s[:n]
}

// garbage returns value slots holding bytes a correct Read overwrites: it
// must reuse each slot with append(values[i][:0], …), never add to it.
func garbage(n int) [][]byte {
	values := make([][]byte, n)
	for i := range values {
		values[i] = bytes.Repeat([]byte{'#'}, 2*fieldLength)
	}
	return values
}

// equalValues reports the first difference between two records.
func equalValues(got, want [][]byte) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			return fmt.Errorf("value %d = %q, want %q", i, got[i], want[i])
		}
	}
	return nil
}

// testInfo checks that Info names the driver and its library, and that
// its settings are each named once and given a value: a setting that
// cannot be read says so in its value rather than being left out.
func testInfo(t errorer, info driver.Info, want []string) {
	if info.Driver == "" || info.Library == "" {
		t.Errorf("Info() = %+v: Driver and Library must be set", info)
	}
	seen := map[string]bool{}
	for _, s := range info.Settings {
		switch {
		case s.Name == "":
			t.Errorf("a setting has no name: %+v", s)
		case seen[s.Name]:
			t.Errorf("setting %s is reported twice: %v", s.Name, info.Settings)
		case strings.TrimSpace(s.Value) == "":
			t.Errorf("setting %s has no value: say why it is unknown instead", s.Name)
		}
		seen[s.Name] = true
	}
	for _, n := range want {
		if !seen[n] {
			t.Errorf("Info has no setting %s: %v", n, info.Settings)
		}
	}
}

// errorer is the part of testing.TB that testInfo reports through, so
// that its own test can see what it reports.
type errorer interface {
	Errorf(format string, args ...any)
}

func testCreateAndInspect(t *testing.T, db driver.DB, tbl driver.Table, want driver.TableType) {
	ctx := context.Background()
	st, err := db.Inspect(ctx, tbl)
	if err != nil {
		t.Fatalf("Inspect before CreateTable: %v", err)
	}
	if st.Exists || st.CreatedByDbprobe || st.HasRows {
		t.Fatalf("Inspect before CreateTable = %+v, want nothing there", st)
	}
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatalf("CreateTable(%s): %v", tbl.Name, err)
	}
	st, err = db.Inspect(ctx, tbl)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	if !st.Exists || !st.CreatedByDbprobe || st.HasRows {
		t.Errorf("Inspect = %+v, want Exists, CreatedByDbprobe, no rows", st)
	}
	if st.Type != want {
		t.Errorf("Inspect reports table type %v (%q), want %v: the type is read from the catalog", st.Type, st.Storage, want)
	}
	if st.Storage == "" {
		t.Errorf("Inspect reports no Storage: the header shows how the table is stored")
	}
	cols := append([]string{tbl.KeyColumn}, tbl.Fields...)
	// Identifiers compare without case: some databases fold them.
	if len(st.Columns) != len(cols) {
		t.Fatalf("Columns = %v, want %v", st.Columns, cols)
	}
	for i := range cols {
		if !strings.EqualFold(st.Columns[i], cols[i]) {
			t.Fatalf("Columns = %v, want %v in that order", st.Columns, cols)
		}
	}
}

func testCRUD(t *testing.T, db driver.DB, tbl driver.Table) {
	ctx := context.Background()
	s := openSession(t, db, tbl)
	key := []byte("crud-0001")
	want := record(string(key), len(tbl.Fields))

	// The driver must copy what it keeps: scribble on the caller's buffers
	// after the call and the stored record must not change.
	keyBuf := bytes.Clone(key)
	vals := record(string(key), len(tbl.Fields))
	if err := s.Insert(ctx, keyBuf, vals); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	keyBuf[0] = 'X'
	for _, v := range vals {
		v[0] = 'X'
	}

	got := garbage(len(tbl.Fields))
	if err := s.Read(ctx, key, nil, got); err != nil {
		t.Fatalf("Read all fields: %v", err)
	}
	if err := equalValues(got, want); err != nil {
		t.Fatalf("Read all fields: %v", err)
	}
	if st, err := db.Inspect(ctx, tbl); err != nil || !st.HasRows {
		t.Errorf("Inspect after Insert = %+v, %v; want HasRows", st, err)
	}

	subset := []int{7, 2, 0}
	got = garbage(len(subset))
	if err := s.Read(ctx, key, subset, got); err != nil {
		t.Fatalf("Read fields %v: %v", subset, err)
	}
	if err := equalValues(got, [][]byte{want[7], want[2], want[0]}); err != nil {
		t.Fatalf("Read fields %v: %v", subset, err)
	}

	// Update one field: exactly that field changes.
	newValue := []byte(pad("updated-field-3|", fieldLength))
	if err := s.Update(ctx, key, []int{3}, [][]byte{newValue}); err != nil {
		t.Fatalf("Update field 3: %v", err)
	}
	want[3] = bytes.Clone(newValue)
	got = garbage(len(tbl.Fields))
	if err := s.Read(ctx, key, nil, got); err != nil {
		t.Fatalf("Read after Update: %v", err)
	}
	if err := equalValues(got, want); err != nil {
		t.Fatalf("after updating field 3: %v", err)
	}

	// Update several fields at once.
	v1, v9 := []byte(pad("updated-field-1|", fieldLength)), []byte(pad("updated-field-9|", fieldLength))
	if err := s.Update(ctx, key, []int{9, 1}, [][]byte{v9, v1}); err != nil {
		t.Fatalf("Update fields 9 and 1: %v", err)
	}
	want[1], want[9] = v1, v9
	if err := s.Read(ctx, key, nil, got); err != nil {
		t.Fatalf("Read after Update: %v", err)
	}
	if err := equalValues(got, want); err != nil {
		t.Fatalf("after updating fields 9 and 1: %v", err)
	}

	if err := s.Delete(ctx, key); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := s.Read(ctx, key, nil, got); !errors.Is(err, driver.ErrNotFound) {
		t.Fatalf("Read after Delete = %v, want ErrNotFound", err)
	}
}

func testNotFound(t *testing.T, db driver.DB, tbl driver.Table) {
	ctx := context.Background()
	s := openSession(t, db, tbl)
	key := []byte("missing-0001")
	values := record(string(key), len(tbl.Fields))
	if err := s.Read(ctx, key, nil, values); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("Read of a missing key = %v, want ErrNotFound", err)
	}
	if err := s.Read(ctx, key, []int{1}, values[:1]); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("Read of one field of a missing key = %v, want ErrNotFound", err)
	}
	if err := s.Update(ctx, key, []int{0}, values[:1]); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("Update of a missing key = %v, want ErrNotFound (the driver must check the rows affected)", err)
	}
	if err := s.Delete(ctx, key); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("Delete of a missing key = %v, want ErrNotFound (the driver must check the rows affected)", err)
	}
	if err := s.Read(ctx, key, nil, values); !errors.Is(err, driver.ErrNotFound) {
		t.Errorf("Read after the failed Update = %v, want ErrNotFound: an update must not insert", err)
	}
}

// printable is every printable ASCII byte, 0x20 to 0x7E.
func printable() []byte {
	b := make([]byte, 0, 0x7f-0x20)
	for c := byte(0x20); c < 0x7f; c++ {
		b = append(b, c)
	}
	return b
}

// awkward values: quotes, backslashes, %, spaces at the ends, SQL and
// COPY/CSV metacharacters that an escaping mistake would mangle.
var awkward = []string{
	`'`, `"`, `\`, `%`, `\\`, `''`, `\N`, `\t`, `a,b;c`, `%s%d%%`, `  spaced  `,
	`'); DROP TABLE x; --`, `$1 ? :name @p1`, `{"json": [1, 2]}`,
}

func testEveryByte(t *testing.T, db driver.DB, tbl driver.Table) {
	ctx := context.Background()
	s := openSession(t, db, tbl)
	all := printable()

	// Field values: every printable byte in field 0, awkward strings and
	// rotations of the printable bytes in the others.
	want := make([][]byte, len(tbl.Fields))
	for i := range want {
		switch {
		case i == 0:
			want[i] = bytes.Clone(all)
		case i-1 < len(awkward):
			want[i] = []byte(awkward[i-1])
		default:
			want[i] = append(bytes.Clone(all[i:]), all[:i]...)
		}
	}
	// Keys made of awkward bytes too, to catch keys spliced into SQL text.
	keys := [][]byte{[]byte(`bytes-'"\%_ ~`), append([]byte("bytes-all-"), all...)}
	for _, key := range keys {
		if err := s.Insert(ctx, key, want); err != nil {
			t.Fatalf("Insert key %q: %v", key, err)
		}
		got := garbage(len(tbl.Fields))
		if err := s.Read(ctx, key, nil, got); err != nil {
			t.Fatalf("Read key %q: %v", key, err)
		}
		if err := equalValues(got, want); err != nil {
			t.Fatalf("key %q: %v", key, err)
		}
	}

	// Through Update, one awkward value per field in turn.
	key := keys[0]
	for i, a := range awkward {
		f := i % len(tbl.Fields)
		if err := s.Update(ctx, key, []int{f}, [][]byte{[]byte(a)}); err != nil {
			t.Fatalf("Update field %d to %q: %v", f, a, err)
		}
		got := garbage(1)
		if err := s.Read(ctx, key, []int{f}, got); err != nil {
			t.Fatalf("Read field %d: %v", f, err)
		}
		if !bytes.Equal(got[0], []byte(a)) {
			t.Fatalf("field %d after Update = %q, want %q", f, got[0], a)
		}
	}
	for _, key := range keys {
		if err := s.Delete(ctx, key); err != nil {
			t.Fatalf("Delete key %q: %v", key, err)
		}
	}
}

func testMaxLength(t *testing.T, db driver.DB, tbl driver.Table) {
	ctx := context.Background()
	s := openSession(t, db, tbl)
	key := []byte(pad("maxlen-", tbl.KeyLength))
	want := make([][]byte, len(tbl.Fields))
	for i := range want {
		want[i] = []byte(pad(fmt.Sprintf("f%d-%s", i, printable()), tbl.FieldLength))
	}
	if err := s.Insert(ctx, key, want); err != nil {
		t.Fatalf("Insert of a %d-byte key and %d-byte fields: %v", len(key), tbl.FieldLength, err)
	}
	got := garbage(len(tbl.Fields))
	if err := s.Read(ctx, key, nil, got); err != nil {
		t.Fatalf("Read: %v", err)
	}
	if err := equalValues(got, want); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, key); err != nil {
		t.Fatalf("Delete: %v", err)
	}
}

// testInsertBatch loads batches of several sizes and reads every record
// back. The sizes straddle what a driver might chunk by.
func testInsertBatch(t *testing.T, db driver.DB, tbl driver.Table, prefix string) {
	ctx := context.Background()
	s := openSession(t, db, tbl)
	if err := s.InsertBatch(ctx, nil, nil); err != nil {
		t.Fatalf("InsertBatch of no records: %v", err)
	}
	all := printable()
	n := 0
	for _, size := range []int{1, 7, 1003} {
		keys := make([][]byte, size)
		values := make([][][]byte, size)
		for i := range keys {
			keys[i] = []byte(fmt.Sprintf("batch-%s-%06d", prefix, n))
			values[i] = record(string(keys[i]), len(tbl.Fields))
			n++
		}
		// Awkward bytes through the bulk path too (COPY and CSV escaping).
		values[0][1] = bytes.Clone(all)
		values[size-1][2] = []byte(`\N`)
		if err := s.InsertBatch(ctx, keys, values); err != nil {
			t.Fatalf("InsertBatch of %d records: %v", size, err)
		}
		got := garbage(len(tbl.Fields))
		for i, key := range keys {
			if err := s.Read(ctx, key, nil, got); err != nil {
				t.Fatalf("Read %s after InsertBatch of %d: %v", key, size, err)
			}
			if err := equalValues(got, values[i]); err != nil {
				t.Fatalf("%s after InsertBatch of %d: %v", key, size, err)
			}
		}
	}
	start := []byte(fmt.Sprintf("batch-%s-", prefix))
	var seen int
	if _, err := s.Scan(ctx, start, n+10, []int{0}, func(key []byte, _ [][]byte) {
		if bytes.HasPrefix(key, start) {
			seen++
		}
	}); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if seen != n {
		t.Errorf("Scan found %d batch records, want %d: InsertBatch lost or added rows", seen, n)
	}
}

func testScan(t *testing.T, db driver.DB, tbl driver.Table) {
	ctx := context.Background()
	// A table of its own, so that "the end of the table" is known.
	own := newTable(tbl.Name + "_scan")
	if err := db.CreateTable(ctx, own); err != nil {
		t.Fatalf("CreateTable(%s): %v", own.Name, err)
	}
	defer func() {
		if err := db.DropTable(ctx, own); err != nil {
			t.Errorf("DropTable(%s): %v", own.Name, err)
		}
	}()
	s, err := db.Session(ctx, own)
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	defer s.Close()

	const total = 50
	keys := make([][]byte, total)
	values := make([][][]byte, total)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("scan-%03d", i))
		values[i] = record(string(keys[i]), len(own.Fields))
	}
	// Inserted out of order: the scan must sort, not replay insertion.
	rand.Shuffle(total, func(i, j int) {
		keys[i], keys[j] = keys[j], keys[i]
		values[i], values[j] = values[j], values[i]
	})
	if err := s.InsertBatch(ctx, keys, values); err != nil {
		t.Fatalf("InsertBatch: %v", err)
	}

	type visited struct {
		key    string
		values [][]byte
	}
	scan := func(start string, count int, fields []int) []visited {
		t.Helper()
		var out []visited
		n, err := s.Scan(ctx, []byte(start), count, fields, func(key []byte, vals [][]byte) {
			// The arguments are valid only during the call: copy them.
			v := visited{key: string(key)}
			for _, b := range vals {
				v.values = append(v.values, bytes.Clone(b))
			}
			out = append(out, v)
		})
		if err != nil {
			t.Fatalf("Scan(%q, %d, %v): %v", start, count, fields, err)
		}
		if n != len(out) {
			t.Fatalf("Scan(%q, %d, %v) returned %d but visited %d records", start, count, fields, n, len(out))
		}
		return out
	}
	check := func(got []visited, first, want int, fields []int) {
		t.Helper()
		if len(got) != want {
			t.Fatalf("scan from scan-%03d read %d records, want %d", first, len(got), want)
		}
		for i, v := range got {
			wantKey := fmt.Sprintf("scan-%03d", first+i)
			if v.key != wantKey {
				t.Fatalf("record %d of the scan has key %q, want %q (keys in order from the start key)", i, v.key, wantKey)
			}
			rec := record(wantKey, len(own.Fields))
			var wantVals [][]byte
			if fields == nil {
				wantVals = rec
			} else {
				for _, f := range fields {
					wantVals = append(wantVals, rec[f])
				}
			}
			if err := equalValues(v.values, wantVals); err != nil {
				t.Fatalf("record %s: %v", v.key, err)
			}
		}
	}

	check(scan("scan-010", 5, nil), 10, 5, nil)                  // from an existing key, inclusive
	check(scan("scan-0105", 3, []int{4}), 11, 3, []int{4})       // from between two keys
	check(scan("scan-045", 10, []int{9, 0}), 45, 5, []int{9, 0}) // fewer at the end of the table
	check(scan("", 3, []int{1}), 0, 3, []int{1})                 // from before the first key
	check(scan("scan-000", total+5, nil), 0, total, nil)         // the whole table
	check(scan("scan-999", 5, nil), 0, 0, nil)                   // past the end
	if n, err := s.Scan(ctx, []byte("scan-020"), 4, nil, nil); err != nil || n != 4 {
		t.Errorf("Scan without visit = %d, %v; want 4, nil", n, err)
	}
	if n, err := s.Scan(ctx, []byte("scan-020"), 0, nil, nil); err != nil || n != 0 {
		t.Errorf("Scan of 0 records = %d, %v; want 0, nil", n, err)
	}
}

// testConcurrent runs sessions in parallel on distinct keys; under -race it
// also checks that sessions share no unguarded state.
func testConcurrent(t *testing.T, db driver.DB, tbl driver.Table) {
	ctx := context.Background()
	const perSession = 100
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for w := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				s, err := db.Session(ctx, tbl)
				if err != nil {
					return fmt.Errorf("Session: %w", err)
				}
				defer s.Close()
				got := garbage(len(tbl.Fields))
				for i := range perSession {
					key := []byte(fmt.Sprintf("concurrent-%02d-%04d", w, i))
					want := record(string(key), len(tbl.Fields))
					if err := s.Insert(ctx, key, want); err != nil {
						return fmt.Errorf("session %d: Insert %s: %w", w, key, err)
					}
					if err := s.Read(ctx, key, nil, got); err != nil {
						return fmt.Errorf("session %d: Read %s: %w", w, key, err)
					}
					if err := equalValues(got, want); err != nil {
						return fmt.Errorf("session %d: %s: %w", w, key, err)
					}
					v := []byte(pad(fmt.Sprintf("concurrent-update-%d-%d|", w, i), fieldLength))
					if err := s.Update(ctx, key, []int{i % len(tbl.Fields)}, [][]byte{v}); err != nil {
						return fmt.Errorf("session %d: Update %s: %w", w, key, err)
					}
					if i%2 == 0 {
						if err := s.Delete(ctx, key); err != nil {
							return fmt.Errorf("session %d: Delete %s: %w", w, key, err)
						}
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func testDuplicate(t *testing.T, db driver.DB, tbl driver.Table) {
	ctx := context.Background()
	s := openSession(t, db, tbl)
	key := []byte("duplicate-0001")
	want := record(string(key), len(tbl.Fields))
	if err := s.Insert(ctx, key, want); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	other := record("other", len(tbl.Fields))
	err := s.Insert(ctx, key, other)
	if err == nil {
		t.Fatal("a second Insert of the same key succeeded, want an error")
	}
	if driver.IsRetryable(err) || errors.Is(err, driver.ErrNotFound) {
		t.Errorf("duplicate Insert: %v (class %v): want an error that is neither retryable nor ErrNotFound", err, driver.ClassOf(err))
	}
	// A batch holding a duplicate fails as a whole, and the session stays usable.
	keys := [][]byte{[]byte("duplicate-0002"), key}
	err = s.InsertBatch(ctx, keys, [][][]byte{record("duplicate-0002", len(tbl.Fields)), other})
	if err == nil {
		t.Fatal("InsertBatch with an existing key succeeded, want an error")
	}
	if driver.IsRetryable(err) {
		t.Errorf("InsertBatch with a duplicate: %v is retryable, want not", err)
	}
	got := garbage(len(tbl.Fields))
	if err := s.Read(ctx, key, nil, got); err != nil {
		t.Fatalf("Read after the failed inserts: %v", err)
	}
	if err := equalValues(got, want); err != nil {
		t.Fatalf("after the failed inserts: %v", err)
	}
	if err := s.Delete(ctx, key); err != nil {
		t.Fatalf("Delete: %v", err)
	}
}

// testCanceled checks that an operation under a cancelled context fails
// rather than running or hanging.
func testCanceled(t *testing.T, db driver.DB, tbl driver.Table) {
	s := openSession(t, db, tbl)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	key := []byte("canceled-0001")
	values := record(string(key), len(tbl.Fields))
	if err := s.Insert(ctx, key, values); err == nil {
		t.Error("Insert under a cancelled context succeeded, want an error")
	}
	if err := s.Read(ctx, key, nil, values); err == nil {
		t.Error("Read under a cancelled context succeeded, want an error")
	}
}

func testForeign(t *testing.T, db driver.DB, cfg Config, name string) {
	ctx := context.Background()
	cfg.CreateForeignTable(t, name)
	ft := newTable(name)
	st, err := db.Inspect(ctx, ft)
	if err != nil {
		t.Fatalf("Inspect(%s): %v", name, err)
	}
	if !st.Exists || st.CreatedByDbprobe || !st.HasRows {
		t.Errorf("Inspect of a foreign table = %+v, want Exists, not CreatedByDbprobe, HasRows", st)
	}
	if err := db.DropTable(ctx, ft); err == nil {
		t.Errorf("DropTable of a table dbprobe did not create succeeded, want a refusal")
	} else if !strings.Contains(strings.ToLower(err.Error()), "did not create") &&
		!strings.Contains(strings.ToLower(err.Error()), "not created") {
		t.Logf("DropTable refused with %q; a message that says dbprobe did not create the table helps the user", err)
	}
	st, err = db.Inspect(ctx, ft)
	if err != nil {
		t.Fatalf("Inspect(%s) after the refused DropTable: %v", name, err)
	}
	if !st.Exists || !st.HasRows {
		t.Errorf("after the refused DropTable, Inspect = %+v: the table and its row must still be there", st)
	}
}

// testReplaced checks that a table dbprobe created, dropped by someone else
// and created again by them under the same name, is not dbprobe's: its
// marker row names it, but the table is not the one recorded.
func testReplaced(t *testing.T, db driver.DB, cfg Config, name string) {
	ctx := context.Background()
	tbl := newTable(name)
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatalf("CreateTable(%s): %v", name, err)
	}
	st, err := db.Inspect(ctx, tbl)
	if err != nil || !st.CreatedByDbprobe || st.OwnershipNote != "" {
		t.Fatalf("Inspect of the new table = %+v, %v; want CreatedByDbprobe and no ownership note", st, err)
	}
	cfg.DropBehindDbprobe(t, name)
	cfg.CreateForeignTable(t, name)
	st, err = db.Inspect(ctx, tbl)
	if err != nil {
		t.Fatalf("Inspect(%s) after it was replaced: %v", name, err)
	}
	if !st.Exists || st.CreatedByDbprobe || !st.HasRows || st.OwnershipNote == "" {
		t.Errorf("Inspect of the replaced table = %+v, want Exists, not CreatedByDbprobe, HasRows and a note saying why", st)
	}
	if err := db.DropTable(ctx, tbl); !badinput.Is(err) {
		t.Errorf("DropTable of the replaced table: %v, want a refusal as bad input", err)
	}
	st, err = db.Inspect(ctx, tbl)
	if err != nil {
		t.Fatalf("Inspect(%s) after the refused DropTable: %v", name, err)
	}
	if !st.Exists || !st.HasRows {
		t.Errorf("after the refused DropTable, Inspect = %+v: the table and its row must still be there", st)
	}
}

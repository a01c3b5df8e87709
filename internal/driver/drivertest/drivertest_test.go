package drivertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// TestSuiteOnFake runs the suite on a small correct driver kept in maps, so
// that the suite itself is checked apart from any real database.
func TestSuiteOnFake(t *testing.T) {
	store := &fakeStore{tables: map[string]*fakeTable{}}
	Run(t, Config{
		Open:     func(t *testing.T, opts driver.Options) driver.DB { return &fakeDB{store: store} },
		Settings: SessionSettings,
		CreateForeignTable: func(t *testing.T, name string) {
			store.mu.Lock()
			defer store.mu.Unlock()
			store.tables[strings.ToLower(name)] = &fakeTable{
				cols: []string{"YCSB_KEY", "FIELD0"},
				rows: map[string][][]byte{"theirs": {[]byte("precious")}},
			}
		},
	})
	if n := len(store.tables); n != 1 {
		t.Errorf("%d tables left after the suite, want only the foreign one", n)
	}
}

type fakeStore struct {
	mu     sync.Mutex
	tables map[string]*fakeTable
}

type fakeTable struct {
	ours bool
	cols []string
	rows map[string][][]byte
}

type fakeDB struct{ store *fakeStore }

func (d *fakeDB) Info() driver.Info {
	return driver.Info{Driver: "fake", Library: "maps", Settings: []driver.Setting{
		{Name: "transaction_isolation", Value: "serializable: one lock around the maps"},
		{Name: "autocommit", Value: "every operation applies at once"},
	}}
}

func (d *fakeDB) Inspect(_ context.Context, t driver.Table) (driver.TableState, error) {
	d.store.mu.Lock()
	defer d.store.mu.Unlock()
	ft := d.store.tables[strings.ToLower(t.Name)]
	if ft == nil {
		return driver.TableState{}, nil
	}
	return driver.TableState{Exists: true, CreatedByDbprobe: ft.ours, HasRows: len(ft.rows) > 0, Columns: slices.Clone(ft.cols), Storage: "in a Go map"}, nil
}

func (d *fakeDB) CreateTable(_ context.Context, t driver.Table) error {
	d.store.mu.Lock()
	defer d.store.mu.Unlock()
	if d.store.tables[strings.ToLower(t.Name)] != nil {
		return errors.New("table exists")
	}
	d.store.tables[strings.ToLower(t.Name)] = &fakeTable{ours: true, cols: append([]string{t.KeyColumn}, t.Fields...), rows: map[string][][]byte{}}
	return nil
}

func (d *fakeDB) DropTable(_ context.Context, t driver.Table) error {
	d.store.mu.Lock()
	defer d.store.mu.Unlock()
	ft := d.store.tables[strings.ToLower(t.Name)]
	if ft == nil || !ft.ours {
		return errors.New("refusing: dbprobe did not create " + t.Name)
	}
	delete(d.store.tables, strings.ToLower(t.Name))
	return nil
}

func (d *fakeDB) Session(_ context.Context, t driver.Table) (driver.Session, error) {
	return &fakeSession{store: d.store, name: strings.ToLower(t.Name), fields: len(t.Fields)}, nil
}

func (d *fakeDB) Close() error { return nil }

type fakeSession struct {
	store  *fakeStore
	name   string
	fields int
}

// table returns the session's table; the store's lock is held.
func (s *fakeSession) table() (*fakeTable, error) {
	ft := s.store.tables[s.name]
	if ft == nil {
		return nil, errors.New("no such table")
	}
	return ft, nil
}

func (s *fakeSession) Read(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	ft, err := s.table()
	if err != nil {
		return err
	}
	row, ok := ft.rows[string(key)]
	if !ok {
		return driver.ErrNotFound
	}
	copyFields(row, fields, values)
	return nil
}

func copyFields(row [][]byte, fields []int, values [][]byte) {
	if fields == nil {
		for i := range row {
			values[i] = append(values[i][:0], row[i]...)
		}
		return
	}
	for i, f := range fields {
		values[i] = append(values[i][:0], row[f]...)
	}
}

func (s *fakeSession) Scan(ctx context.Context, start []byte, count int, fields []int, visit func([]byte, [][]byte)) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	ft, err := s.table()
	if err != nil {
		return 0, err
	}
	keys := make([]string, 0, len(ft.rows))
	for k := range ft.rows {
		if k >= string(start) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = keys[:min(count, len(keys))]
	n := s.fields
	if fields != nil {
		n = len(fields)
	}
	values := make([][]byte, n)
	for _, k := range keys {
		copyFields(ft.rows[k], fields, values)
		if visit != nil {
			visit([]byte(k), values)
		}
	}
	return len(keys), nil
}

func (s *fakeSession) Update(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	ft, err := s.table()
	if err != nil {
		return err
	}
	row, ok := ft.rows[string(key)]
	if !ok {
		return driver.ErrNotFound
	}
	for i, f := range fields {
		row[f] = bytes.Clone(values[i])
	}
	return nil
}

func (s *fakeSession) Insert(ctx context.Context, key []byte, values [][]byte) error {
	return s.InsertBatch(ctx, [][]byte{key}, [][][]byte{values})
}

func (s *fakeSession) InsertBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	ft, err := s.table()
	if err != nil {
		return err
	}
	for _, k := range keys {
		if _, dup := ft.rows[string(k)]; dup {
			return driver.Classify(errors.New("duplicate key "+string(k)), "dup", driver.ClassOther)
		}
	}
	for i, k := range keys {
		row := make([][]byte, s.fields)
		for f := range row {
			row[f] = bytes.Clone(values[i][f])
		}
		ft.rows[string(k)] = row
	}
	return nil
}

func (s *fakeSession) Delete(ctx context.Context, key []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	ft, err := s.table()
	if err != nil {
		return err
	}
	if _, ok := ft.rows[string(key)]; !ok {
		return driver.ErrNotFound
	}
	delete(ft.rows, string(key))
	return nil
}

func (s *fakeSession) Close() error { return nil }

// reports records what testInfo reports.
type reports []string

func (e *reports) Errorf(format string, args ...any) { *e = append(*e, fmt.Sprintf(format, args...)) }

// The Info check catches a setting given twice, one without a value and
// one the driver's test expects but Info lacks.
func TestInfoCheck(t *testing.T) {
	info := driver.Info{Driver: "fake", Library: "maps", Settings: []driver.Setting{
		{Name: "autocommit", Value: "on"},
		{Name: "autocommit", Value: "off"},
		{Name: "lock_timeout", Value: " "},
	}}
	var got reports
	testInfo(&got, info, SessionSettings)
	for _, want := range []string{"setting autocommit is reported twice", "setting lock_timeout has no value", "Info has no setting transaction_isolation"} {
		if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("reported %q, want %q among them", got, want)
		}
	}
	if len(got) != 3 {
		t.Errorf("reported %d problems, want 3: %q", len(got), got)
	}
	var none reports
	testInfo(&none, (&fakeDB{}).Info(), SessionSettings)
	if len(none) != 0 {
		t.Errorf("the fake's Info: %q, want no problem", none)
	}
}

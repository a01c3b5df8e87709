// Package null is a driver that stores nothing and answers at once. Run
// against it (--db null), a workload measures dbprobe itself: key choice,
// pacing, histograms and the runner's loop, with no database in the way.
// That ceiling tells whether a figure measured on a real database says
// something about the database or about the client.
//
// Every operation returns nil without looking at its arguments, and
// without allocating: a null run that allocated per operation would put
// the garbage collector's cost into the ceiling it is meant to measure.
package null

import (
	"context"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

func init() {
	driver.Register("null", Driver{})
}

// Driver opens the null database.
type Driver struct{}

// Open accepts "null:" only, and no database knob: an address, an option
// or a knob would be ignored, and dbprobe never ignores what the user
// asked for silently.
func (Driver) Open(_ context.Context, target driver.Target, opts driver.Options) (driver.DB, error) {
	if u := target.URL; u != nil && (u.Opaque != "" || u.Host != "" || u.Path != "" || u.RawQuery != "" || u.User != nil) {
		return nil, badinput.New("--db %s: the null driver takes no address or options; write --db null", target.Redacted())
	}
	const database = "the null driver (no database)"
	switch {
	case opts.TableType != driver.TableDisk:
		return nil, driver.Unsupported(database, "table types (--table-type "+opts.TableType.String()+")", "leave --table-type out: nothing is stored")
	case opts.Durability != driver.DurabilityServer:
		return nil, driver.Unsupported(database, "durability setting (--durability "+opts.Durability.String()+")", "leave --durability out: nothing is committed")
	case opts.OpPath != driver.PathStatement:
		return nil, driver.Unsupported(database, "stored procedures (--op-path "+opts.OpPath.String()+")", "leave --op-path out")
	}
	return db{}, nil
}

// db is the null database; it has no state, so it converts to an
// interface without allocating.
type db struct{}

// Info says that no database is behind the numbers.
func (db) Info() driver.Info {
	return driver.Info{Driver: "null", Library: "none (no-op)", Placement: driver.PlacementNone}
}

// Inspect reports a stateless table that exists, is dbprobe's and holds
// rows, so that load, run and ycsb all go ahead, as often as they are run.
func (db) Inspect(_ context.Context, t driver.Table) (driver.TableState, error) {
	cols := make([]string, 0, len(t.Fields)+1)
	cols = append(cols, t.KeyColumn)
	cols = append(cols, t.Fields...)
	return driver.TableState{Exists: true, CreatedByDbprobe: true, HasRows: true, Stateless: true, Columns: cols, Storage: "none: the null driver keeps nothing"}, nil
}

// CreateTable does nothing.
func (db) CreateTable(context.Context, driver.Table) error { return nil }

// DropTable does nothing.
func (db) DropTable(context.Context, driver.Table) error { return nil }

// Session returns a session that does nothing.
func (db) Session(context.Context, driver.Table) (driver.Session, error) { return session{}, nil }

// Close does nothing.
func (db) Close() error { return nil }

// session does nothing, at once.
type session struct{}

// Read leaves values as they are.
func (session) Read(context.Context, []byte, []int, [][]byte) error { return nil }

// Scan reads no record: there are none.
func (session) Scan(context.Context, []byte, int, []int, func([]byte, [][]byte)) (int, error) {
	return 0, nil
}

// Update does nothing.
func (session) Update(context.Context, []byte, []int, [][]byte) error { return nil }

// Insert does nothing.
func (session) Insert(context.Context, []byte, [][]byte) error { return nil }

// InsertBatch does nothing.
func (session) InsertBatch(context.Context, [][]byte, [][][]byte) error { return nil }

// Delete does nothing.
func (session) Delete(context.Context, []byte) error { return nil }

// Close does nothing.
func (session) Close() error { return nil }

var _ driver.Describer = db{}

// Capabilities says the null driver has none beyond key-value: it runs no
// statement and keeps no table, so there is nothing to fill, copy, scan,
// load, place or count.
func (db) Capabilities() driver.Capabilities {
	c := driver.NewCapabilities("the null driver")
	for _, cap := range driver.AllCapabilities() {
		c.Lacks(cap, "it keeps nothing and runs no statement, so it measures only dbprobe itself; use --db with a database")
	}
	return c
}

// Profile says, before anything is opened, that the null driver has no
// capability beyond key-value and no database.
func (Driver) Profile(driver.Target) driver.Profile {
	return driver.Profile{Database: "the null driver", Placement: driver.PlacementNone, Lacks: driver.Lacking(db{}.Capabilities())}
}

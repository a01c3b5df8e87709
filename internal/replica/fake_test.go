package replica

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// fakeServer is a primary and its replica in memory: the replica shows
// the primary's heartbeat only up to what has been let through, as a
// replica whose replay is paused does.
type fakeServer struct {
	mu      sync.Mutex
	tables  map[string]int64 // heartbeat table → sequence on the primary
	applied map[string]int64 // on the replica; absent until replayed
	paused  bool
	created []string
	dropped []string
}

func newFakeServer() *fakeServer {
	return &fakeServer{tables: map[string]int64{}, applied: map[string]int64{}}
}

func (s *fakeServer) replay() {
	if s.paused {
		return
	}
	for k, v := range s.tables {
		s.applied[k] = v
	}
}

// fakeDB is one side of a fakeServer.
type fakeDB struct {
	s    *fakeServer
	role driver.Role
	info driver.Info
}

func (d *fakeDB) Info() driver.Info { return d.info }
func (d *fakeDB) Inspect(context.Context, driver.Table) (driver.TableState, error) {
	return driver.TableState{}, nil
}
func (d *fakeDB) CreateTable(context.Context, driver.Table) error { return errors.New("not here") }
func (d *fakeDB) DropTable(context.Context, driver.Table) error   { return errors.New("not here") }
func (d *fakeDB) Session(context.Context, driver.Table) (driver.Session, error) {
	return nil, errors.New("not here")
}
func (d *fakeDB) Close() error { return nil }

func (d *fakeDB) Role(context.Context) (driver.Role, error) { return d.role, nil }

func (d *fakeDB) CreateHeartbeat(_ context.Context, name string) error {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	d.s.tables[name] = 0
	d.s.created = append(d.s.created, name)
	d.s.replay()
	return nil
}

func (d *fakeDB) WriteHeartbeat(_ context.Context, name string, seq int64) error {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	d.s.tables[name] = seq
	d.s.replay()
	return nil
}

func (d *fakeDB) ReadHeartbeat(_ context.Context, name string) (int64, bool, error) {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	v, ok := d.s.applied[name]
	return v, ok, nil
}

func (d *fakeDB) DropHeartbeat(_ context.Context, name string) error {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	d.s.dropped = append(d.s.dropped, name)
	delete(d.s.tables, name)
	return nil
}

func (d *fakeDB) HeartbeatTables(_ context.Context, prefix string) ([]string, error) {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	var out []string
	for name := range d.s.tables {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	return out, nil
}

// plainDB is a DB without the capability.
type plainDB struct{ fakeDB }

func (plainDB) Role() {} // shadows fakeDB.Role with another signature

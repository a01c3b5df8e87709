package storage

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
)

// failingDropper is a database whose drop of the tables in fail fails,
// as SQLite's does on a full disk; it records the drops that worked.
type failingDropper struct {
	driver.DB
	driver.TableFiller
	fail    map[string]bool
	dropped []string
}

func (f *failingDropper) DropDataTable(_ context.Context, t driver.DataTable) error {
	if f.fail[t.Name] {
		return errors.New("database or disk is full")
	}
	f.dropped = append(f.dropped, t.Name)
	return nil
}

// A table is said dropped only once its drop worked; one whose drop
// failed is named, with the statement that drops it, and never said
// dropped. --keep says the tables were kept, and drops none. A second
// call, the deferred one after a stop line, finds nothing to do.
func TestDropMadeSaysWhatBecameOfTheTables(t *testing.T) {
	src, dst := "dbprobe_storage_write_src", "dbprobe_storage_write"
	for _, c := range []struct {
		name      string
		keep      bool
		fail      []string
		wants     []string
		never     []string
		wantDrops int
	}{
		{name: "all dropped", wantDrops: 2,
			wants: []string{"the tables " + dst + ", " + src + " dropped"},
			never: []string{"could not", "DROP TABLE"}},
		{name: "one left", fail: []string{dst}, wantDrops: 1,
			wants: []string{"the table " + src + " dropped", "the table " + dst + " could not be dropped", "DROP TABLE " + dst},
			never: []string{dst + " dropped", "DROP TABLE " + src}},
		{name: "both left", fail: []string{src, dst},
			wants: []string{"the tables " + dst + ", " + src + " could not be dropped", "DROP TABLE " + dst + "; DROP TABLE " + src},
			never: []string{" dropped;", "dropped (", "kept"}},
		{name: "kept", keep: true,
			wants: []string{"the tables " + src + ", " + dst + " kept (--keep)"},
			never: []string{"dropped", "DROP TABLE"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := &failingDropper{fail: map[string]bool{}}
			for _, name := range c.fail {
				db.fail[name] = true
			}
			var stderr bytes.Buffer
			j := &job{
				c:      Config{Kind: Write, Keep: c.keep, Stderr: &stderr},
				db:     db,
				target: &experiment.Target{},
				made:   []driver.DataTable{{Name: src}, {Name: dst}},
			}
			got := j.dropMade(context.Background()).text()
			for _, w := range c.wants {
				if !strings.Contains(got, w) {
					t.Errorf("%q does not say %q", got, w)
				}
			}
			for _, n := range c.never {
				if strings.Contains(got, n) {
					t.Errorf("%q says %q", got, n)
				}
			}
			if len(db.dropped) != c.wantDrops {
				t.Errorf("%d tables dropped, want %d: %v", len(db.dropped), c.wantDrops, db.dropped)
			}
			for _, name := range c.fail {
				if !strings.Contains(stderr.String(), "could not drop the table "+name+" this run made: database or disk is full") {
					t.Errorf("stderr does not say why %s was left: %q", name, stderr.String())
				}
			}
			if again := j.dropMade(context.Background()).text(); again != "" || len(db.dropped) != c.wantDrops {
				t.Errorf("a second call said %q and dropped %v", again, db.dropped)
			}
		})
	}
	var none job
	if got := none.dropMade(context.Background()).text(); got != "" {
		t.Errorf("a run that made no table: %q", got)
	}
}

package replica

import (
	"context"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

func TestCheck(t *testing.T) {
	primary := driver.Role{Instance: "sys1@100", Identity: "sys1", Evidence: "in charge"}
	standby := driver.Role{Instance: "sys1@200", Identity: "sys1", Replica: true, Upstream: "sys1", Evidence: "replaying"}
	cases := []struct {
		name     string
		p, r     driver.Role
		rDriver  string
		wantLine string // "" for accepted
	}{
		{"a standby of the primary", primary, standby, "fake", ""},
		{"the primary itself", primary, primary, "fake", "is the primary itself"},
		{"another primary", primary, driver.Role{Instance: "sys2@1", Identity: "sys2", Evidence: "recovery is false"}, "fake", "is not a replica (recovery is false)"},
		{"a standby as --db", standby, driver.Role{Instance: "sys1@300", Identity: "sys1", Replica: true, Upstream: "sys1"}, "fake", "--db P is itself a replica (replaying)"},
		{"a standby of another server", primary, driver.Role{Instance: "sys9@1", Identity: "sys9", Replica: true, Upstream: "sys9"}, "fake", "replicates another server"},
		{"another kind of database", primary, standby, "other", "is a other database"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newFakeServer()
			p := &fakeDB{s: s, role: c.p, info: driver.Info{Driver: "fake"}}
			r := &fakeDB{s: s, role: c.r, info: driver.Info{Driver: c.rDriver}}
			pair, err := Check(context.Background(), p, r, "P", "R")
			if c.wantLine == "" {
				if err != nil || pair.Primary == nil || pair.Replica == nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), c.wantLine) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line of bad input with %q", err, c.wantLine)
			}
			if len(s.created) != 0 {
				t.Fatalf("the check wrote: %v", s.created)
			}
		})
	}
}

func TestCheckWithoutCapability(t *testing.T) {
	s := newFakeServer()
	p := &plainDB{fakeDB{s: s, info: driver.Info{Driver: "plain"}}}
	_, err := Check(context.Background(), p, p, "P", "R")
	if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), "cannot check or measure a replica") {
		t.Fatalf("got %v", err)
	}
}

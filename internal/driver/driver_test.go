package driver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"dbprobe/internal/badinput"
)

type stubDriver struct{}

func (stubDriver) Open(context.Context, Target, Options) (DB, error) { return nil, nil }

func init() { Register("stub", stubDriver{}, "stubdb") }

func TestParseTarget(t *testing.T) {
	tests := []struct {
		raw, password    string
		driver, redacted string
		wantPassword     string
	}{
		{"stub://u:secret@127.0.0.1:5/db", "", "stub", "stub://u:xxxxx@127.0.0.1:5/db", "secret"},
		{"stubdb://u@h/db", "fromenv", "stub", "stubdb://u@h/db", "fromenv"},
		{"STUB://u:p%40ss@h/db?password=also", "", "stub", "stub://u:xxxxx@h/db?password=xxxxx", "p@ss"},
		{"stub://u@h/db?password=inquery", "", "stub", "stub://u@h/db?password=xxxxx", "inquery"},
		{"stub", "", "stub", "stub:", ""},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			target, err := ParseTarget(tt.raw, tt.password)
			if err != nil {
				t.Fatal(err)
			}
			if target.Driver != tt.driver || target.Redacted() != tt.redacted || target.Password != tt.wantPassword {
				t.Fatalf("got driver %q, redacted %q, password %q", target.Driver, target.Redacted(), target.Password)
			}
		})
	}
}

func TestParseTargetBadInput(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"", "--db is empty"},
		{"oracle://u:hunter2@h/x", "unknown database"},
		{"stub://u:hunter2@[::1", "not a valid URL"},
		{"://u:hunter2@h", "not a valid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			_, err := ParseTarget(tt.raw, "")
			if !badinput.Is(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want bad input containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("the password is in the message: %v", err)
			}
		})
	}
}

func TestScrub(t *testing.T) {
	target, err := ParseTarget("stub://u:p%2Fw%20d@h/db", "")
	if err != nil {
		t.Fatal(err)
	}
	msg := target.Scrub("failed: p/w d and p%2Fw%20d and p%2Fw+d")
	if strings.Contains(msg, "p/w d") || strings.Contains(msg, "p%2Fw") {
		t.Fatalf("scrubbed message still holds the password: %q", msg)
	}
}

func TestRegistry(t *testing.T) {
	if _, name, err := Lookup("stubdb"); err != nil || name != "stub" {
		t.Fatalf("Lookup(stubdb) = %q, %v", name, err)
	}
	_, _, err := Lookup("nosuch")
	if err == nil || !strings.Contains(err.Error(), "stubdb") {
		t.Fatalf("Lookup of an unknown scheme should list the known ones: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("registering a name twice did not panic")
		}
	}()
	Register("stub", stubDriver{})
}

func TestClassification(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		err                      error
		retry, connLost, timeout bool
		code                     string
	}{
		{Classify(base, "40001", ClassConflict), true, false, false, "40001"},
		{Classify(base, "5", ClassBusy), true, false, false, "5"},
		{Classify(base, "08006", ClassConnLost), false, true, false, "08006"},
		{Classify(base, "57014", ClassTimeout), false, false, true, "57014"},
		{Classify(base, "23505", ClassOther), false, false, false, "23505"},
		{base, false, false, false, ""},
		{ErrNotFound, false, false, false, ""},
	}
	for _, tt := range tests {
		if IsRetryable(tt.err) != tt.retry || IsConnLost(tt.err) != tt.connLost || IsTimeout(tt.err) != tt.timeout || Code(tt.err) != tt.code {
			t.Errorf("%v: retryable %v connlost %v timeout %v code %q", tt.err, IsRetryable(tt.err), IsConnLost(tt.err), IsTimeout(tt.err), Code(tt.err))
		}
	}
	if Classify(nil, "x", ClassOther) != nil {
		t.Error("Classify(nil) is not nil")
	}
}

func FuzzParseTarget(f *testing.F) {
	f.Add("postgres://user:pw@127.0.0.1:5432/db?sslmode=disable")
	f.Add("stub://u:pa:ss@h")
	f.Add("sqlite:///tmp/x.db")
	f.Fuzz(func(t *testing.T, raw string) {
		target, err := ParseTarget(raw, "")
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("error is not bad input: %v", err)
			}
			return
		}
		if target.Password != "" && len(target.Password) >= 4 && strings.Contains(target.Redacted(), target.Password) {
			t.Fatalf("Redacted %q shows the password %q", target.Redacted(), target.Password)
		}
	})
}

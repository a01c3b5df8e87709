package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/cli"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// nullClient runs one client of a run on the null driver and returns its
// result's path.
func nullClient(t *testing.T, dir string, index, count int, extra ...string) string {
	t.Helper()
	out := filepath.Join(dir, "r"+string(rune('0'+index))+"-of-"+string(rune('0'+count))+".jsonl")
	args := append([]string{"run", "--db", "null", "-q", "--client-index", string(rune('0' + index)), "--client-count", string(rune('0' + count)),
		"--operations", "3000", "--seed", "1", "--out", out}, extra...)
	if _, stderr, err := run(t, args...); err != nil {
		t.Fatalf("client %d: %v\n%s", index, err, stderr)
	}
	return out
}

func TestSeveralClientsBadInput(t *testing.T) {
	dir := t.TempDir()
	loaded := "sqlite://" + filepath.Join(dir, "loaded.db")
	if _, stderr, err := run(t, "load", "--db", loaded, "-p", "recordcount=10"); err != nil {
		t.Fatalf("load: %v\n%s", err, stderr)
	}
	fresh := "sqlite://" + filepath.Join(dir, "fresh.db")
	r0 := nullClient(t, dir, 0, 2)
	r1 := nullClient(t, dir, 1, 2)
	r1of3 := nullClient(t, dir, 1, 3)
	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"index out of range", []string{"run", "--db", loaded, "--client-index", "3", "--client-count", "3"}, "--client-index 3 is out of range for --client-count 3: give 0 to 2"},
		{"negative index", []string{"run", "--db", loaded, "--client-index", "-1", "--client-count", "2"}, "--client-index -1 is out of range"},
		{"index without count", []string{"run", "--db", loaded, "--client-index", "1"}, "--client-index 1 without --client-count"},
		{"count 0", []string{"run", "--db", loaded, "--client-count", "0"}, "--client-count 0"},
		{"start in the past", []string{"run", "--db", loaded, "--client-count", "2", "--start-at", past}, "is in the past"},
		{"start not a time", []string{"run", "--db", loaded, "--start-at", "in five minutes"}, "is not an RFC 3339 time"},
		{"more clients than records", []string{"load", "--db", fresh, "-p", "recordcount=3", "--client-count", "4"}, "--client-count 4 is more than the 3 records to load"},
		{"more clients than operations", []string{"run", "--db", loaded, "--operations", "3", "--client-count", "4"}, "more than the 3 operations"},
		{"drop with clients", []string{"load", "--db", fresh, "--drop-existing", "--client-count", "2"}, "--drop-existing with --client-count 2"},
		{"monitor client out of range", []string{"run", "--db", loaded, "--client-count", "2", "--monitor-client", "2"}, "--monitor-client 2 is out of range"},
		{"merge counts differ", []string{"merge", r0, r1of3, "-o", filepath.Join(dir, "m.jsonl")}, "client counts differ"},
		{"merge a missing client", []string{"merge", r0, r0, "-o", filepath.Join(dir, "m.jsonl")}, "are both client 0"},
		{"merge over an input", []string{"merge", r0, r1, "-o", r1}, "is also the input"},
		{"merge without -o", []string{"merge", r0, r1}, "merge needs -o MERGED"},
		{"merge one result", []string{"merge", r0, "-o", filepath.Join(dir, "m.jsonl")}, "merge takes the results of two or more clients"},
		{"merge a missing file", []string{"merge", r0, filepath.Join(dir, "nope.jsonl"), "-o", filepath.Join(dir, "m.jsonl")}, "cannot read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, _, err := run(t, tt.args...)
			if err == nil {
				t.Fatalf("no error; stdout:\n%s", stdout)
			}
			if !badinput.Is(err) && !cli.IsUsageError(err) {
				t.Fatalf("err %v is not bad input (exit 2)", err)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Fatalf("message %q, want one line containing %q", msg, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "m.jsonl")); err == nil {
		t.Fatal("a refused merge wrote its output")
	}
	if _, err := os.Stat(filepath.Join(dir, "fresh.db")); err == nil {
		t.Fatal("a refused load created its database")
	}
}

func TestMergeOfNullClients(t *testing.T) {
	dir := t.TempDir()
	// One after the other: they share no window, and the merge still
	// adds up every operation.
	paths := []string{}
	for i := range 3 {
		paths = append(paths, nullClient(t, dir, i, 3))
	}
	merged := filepath.Join(dir, "merged.jsonl")
	stdout, stderr, err := run(t, append(append([]string{"merge"}, paths...), "-o", merged)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "# all operations of all clients: 3000") {
		t.Fatalf("the merge does not count the clients' 3000 operations:\n%s", stdout)
	}
	f, err := os.Open(merged)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rf, err := result.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	m := rf.Phases[0].Summary.Merge
	if m == nil || m.AllOps != 3000 || len(m.Clients) != 3 || m.MonitorClient != 0 {
		t.Fatalf("merged summary %+v", m)
	}
	for i, c := range m.Clients {
		if c.Ops != 1000 {
			t.Fatalf("client %d did %d operations, want its share, 1000", i, c.Ops)
		}
	}
}

// TestSeveralClientsCapacityOnPostgres refuses, before anything is
// written, a run whose clients together would open more connections than
// the server's max_connections.
func TestSeveralClientsCapacityOnPostgres(t *testing.T) {
	u := testdb.FreshPostgresDatabase(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var max int
	if err := conn.QueryRow(ctx, "SELECT current_setting('max_connections')::int").Scan(&max); err != nil {
		t.Fatal(err)
	}
	clients := max/2 + 1 // two threads each: one more than the server takes
	_, _, err = run(t, "load", "--db", u, "-p", "recordcount=1000", "--threads", "2", "--client-count", fmt.Sprint(clients), "--client-index", "0")
	want := fmt.Sprintf("the %d clients need %d connections (%d × --threads 2", clients, 2*clients+1, clients)
	if !badinput.Is(err) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "max_connections") {
		t.Fatalf("err %v, want bad input containing %q", err, want)
	}
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass('usertable') IS NOT NULL").Scan(&exists); err != nil || exists {
		t.Fatalf("the refused load created its table (%v, %v)", exists, err)
	}
}

package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// TestStorageDurationZeroAndChunkClamp: --duration 0s is refused rather
// than run as the default 60 s, and a --chunk over --size is clamped to
// it, saying so, rather than writing the whole chunk.
func TestStorageDurationZeroAndChunkClamp(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite://" + filepath.Join(dir, "st.db")
	_, _, err := run(t, "storage", "scan", "--db", db, "--size", "2MB", "--duration", "0s")
	if !badinput.Is(err) || !strings.Contains(err.Error(), "--duration 0s") {
		t.Errorf("--duration 0s: %v", err)
	}
	out := filepath.Join(dir, "w.jsonl")
	_, stderr, err := run(t, "storage", "write", "--db", db, "--size", "2MB", "--chunk", "5MB", "--duration", "5s", "--out", out)
	if err != nil {
		t.Fatalf("write: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "--chunk 5MB is larger than --size 2MB") {
		t.Errorf("stderr %q", stderr)
	}
	st := readResult(t, out).Phases[0].Summary.Storage
	if want := int64(2_000_000 / 1008); st.Rows != want {
		t.Errorf("wrote %d rows, want %d: one chunk of --size", st.Rows, want)
	}
	// The default chunk clamped is not called the user's --chunk.
	_, stderr, err = run(t, "storage", "write", "--db", db, "--size", "2MB", "--duration", "5s")
	if err != nil {
		t.Fatalf("write: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "dbprobe: the default --chunk 100MB is larger than --size 2MB") {
		t.Errorf("default chunk: stderr %q", stderr)
	}
}

// TestStorageHelpAndHint: an unknown flag points to the subcommand's own
// help by its whole path; the paragraphs every experiment shares are in
// dbprobe storage --help once, not repeated in each subcommand's.
func TestStorageHelpAndHint(t *testing.T) {
	_, _, err := run(t, "storage", "read", "--bogus")
	if !badinput.Is(err) || !strings.Contains(err.Error(), "see dbprobe storage read --help") {
		t.Errorf("unknown flag: %v", err)
	}
	shared := "Without --db a new SQLite database"
	parent, _, _ := run(t, "storage", "--help")
	sub, _, _ := run(t, "storage", "scan", "--help")
	if !strings.Contains(parent, shared) || strings.Contains(sub, shared) || !strings.Contains(sub, "dbprobe storage --help says what every experiment shares") {
		t.Errorf("storage --help has the shared paragraphs: %v; scan --help repeats them: %v", strings.Contains(parent, shared), strings.Contains(sub, shared))
	}
}

// storage cache without --db is refused before the SQLite database it
// would use is made: one line, nothing on stderr before it.
func TestStorageCacheWithoutDB(t *testing.T) {
	t.Setenv("DBPROBE_DB", "")
	out, stderr, err := run(t, "storage", "cache")
	if !badinput.Is(err) || !strings.Contains(err.Error(), "give --db postgres://") {
		t.Errorf("storage cache without --db: %v", err)
	}
	if out != "" || stderr != "" {
		t.Errorf("printed %q and %q before refusing", out, stderr)
	}
}

package cli

import (
	"os"
	"testing"
	"time"
)

func TestDefaultSweepOutTakesTheNextFreeName(t *testing.T) {
	t.Chdir(t.TempDir())
	now := time.Date(2026, 11, 27, 23, 1, 2, 0, time.UTC)
	for _, want := range []string{"sweep-20261127-230102.json", "sweep-20261127-230102-2.json", "sweep-20261127-230102-3.json"} {
		got := defaultSweepOut(now)
		if got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
		if err := os.WriteFile(got, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

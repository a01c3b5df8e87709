package experiment

import (
	"regexp"
	"testing"
	"time"
)

func TestNewRunID(t *testing.T) {
	now := time.Date(2026, 11, 25, 19, 40, 12, 0, time.FixedZone("CET", 3600))
	format := regexp.MustCompile(`^20261125T184012Z-[0-9a-f]{4}$`)
	seen := map[string]bool{}
	for range 20 {
		id := NewRunID(now)
		if !format.MatchString(id) {
			t.Fatalf("NewRunID = %q, want the UTC time and four hex digits", id)
		}
		seen[id] = true
	}
	if len(seen) < 2 {
		t.Error("twenty ids in the same second were all the same")
	}
}

package badinput

import (
	"errors"
	"fmt"
	"testing"
)

func TestIsSeesThroughWrapping(t *testing.T) {
	cause := errors.New("connection refused")
	err := fmt.Errorf("load: %w", New("cannot reach %s: %w", "127.0.0.1:1", cause))
	if !Is(err) {
		t.Fatalf("Is(%v) = false, want true", err)
	}
	if !errors.Is(err, cause) {
		t.Fatalf("the cause is not reachable through %v", err)
	}
	if Is(cause) {
		t.Fatalf("Is(plain error) = true, want false")
	}
	if got, want := New("x=%d", 3).Error(), "x=3"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
}

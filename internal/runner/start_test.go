package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestStartAtHoldsThePhase checks that a phase given StartAt measures
// nothing before it: the clients of a run of several start together.
func TestStartAtHoldsThePhase(t *testing.T) {
	db := &fakeDB{}
	at := time.Now().Add(300 * time.Millisecond)
	out, err := Execute(context.Background(), db.plan(50, PerWorker), Options{Threads: 2, StartAt: at})
	if err != nil {
		t.Fatal(err)
	}
	if out.Start.Before(at) || out.Ops != 50 {
		t.Fatalf("the phase started at %s with %d operations, before its start at %s", out.Start.Format(time.RFC3339Nano), out.Ops, at.Format(time.RFC3339Nano))
	}
	if db.sessions.Load() != 2 {
		t.Fatalf("%d sessions opened, want the 2 workers' (opened before the wait)", db.sessions.Load())
	}
}

func TestStartAtInterrupted(t *testing.T) {
	db := &fakeDB{}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := Execute(ctx, db.plan(50, PerWorker), Options{Threads: 2, StartAt: time.Now().Add(time.Hour)})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting for the start") {
		t.Fatalf("err %v, want the wait's interruption", err)
	}
}

package experiment

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testdb"
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

// With --metrics-linger, /metrics still answers after the last phase, until
// the wait ends or the run is interrupted; then it is closed.
func TestMetricsLingerServesAfterTheRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := WatchInterrupts(ctx)
	stderr := &testdb.LockedBuffer{}
	o, err := OpenOutputs(in.Context(), OutputConfig{MetricsAddr: "127.0.0.1:0", MetricsLinger: time.Hour}, io.Discard, stderr, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Header(result.Header{Experiment: result.ExperimentYCSB, Phase: "run"}); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error)
	go func() { closed <- o.Close() }()

	// The outputs are closing, and the endpoint still serves.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "--metrics-linger") {
		if time.Now().After(deadline) {
			t.Fatalf("no linger line on stderr: %q", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Get(o.metricsURL)
	if err != nil {
		t.Fatalf("/metrics while lingering: %v", err)
	}
	resp.Body.Close()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) before the linger ended", err)
	default:
	}

	cancel() // Ctrl-C ends the wait
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	for time.Now().Before(deadline) {
		if _, err := http.Get(o.metricsURL); err != nil {
			return // closed, as it should be
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Error("/metrics still served after the run was interrupted")
}

package experiment

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
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

// A monitor sample that ends before its phase's header is written (the
// monitor starts first; on a loaded machine its first 250 ms interval can
// end before the header is composed) comes after the header in the JSON
// result, which then reads; a sample between a phase's summary and the
// next header waits for that header.
func TestMonitorSampleBeforeTheHeaderWaitsForIt(t *testing.T) {
	ctx := context.Background()
	in := WatchInterrupts(ctx)
	defer in.Stop()
	path := filepath.Join(t.TempDir(), "r.jsonl")
	o, err := OpenOutputs(in.Context(), OutputConfig{Out: path}, io.Discard, io.Discard, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sample := func(phase string) result.MonitorSample {
		return result.MonitorSample{Phase: phase, Start: now, End: now.Add(250 * time.Millisecond), Metrics: map[string]float64{"host.cpu.user%": 10}}
	}
	o.Monitor(sample("load"))
	if err := o.Header(result.Header{Experiment: result.ExperimentYCSB, Phase: "load"}); err != nil {
		t.Fatal(err)
	}
	o.Monitor(sample("load"))
	if err := o.Summary(result.Summary{Phase: "load"}); err != nil {
		t.Fatal(err)
	}
	o.Monitor(sample("run"))
	if err := o.Header(result.Header{Experiment: result.ExperimentYCSB, Phase: "run"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Summary(result.Summary{Phase: "run"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := result.Read(f)
	if err != nil {
		t.Fatalf("the result does not read: %v", err)
	}
	if len(r.Phases) != 2 || len(r.Phases[0].Monitor) != 2 || len(r.Phases[1].Monitor) != 1 {
		t.Fatalf("phases %d, samples %d and %d; want 2 phases with 2 and 1", len(r.Phases), len(r.Phases[0].Monitor), len(r.Phases[len(r.Phases)-1].Monitor))
	}
}

package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/keygen"
	"github.com/dbprobe/dbprobe/internal/measure"
	"github.com/dbprobe/dbprobe/internal/result"
	"github.com/dbprobe/dbprobe/internal/testbin"
)

// dbprobeIn runs the binary bin inside a network namespace, as a client
// on a machine of its own would, killing it after limit.
func dbprobeIn(bin, ns string, limit time.Duration, args ...string) (outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, bin}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	o := outcome{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return o, fmt.Errorf("dbprobe %s in %s did not end within %v", args[0], ns, limit)
	case errors.As(err, &exit):
		o.code = exit.ExitCode()
	case err != nil:
		return o, err
	}
	return o, nil
}

// clientsInParallel runs one dbprobe command per namespace at once, the
// client index and the result file added to each one's arguments, and
// fails the test unless every one exits 0. It returns the results' paths.
func clientsInParallel(t *testing.T, nss []*netNS, dir, name string, args ...string) []string {
	t.Helper()
	bin := testbin.ForTest(t)
	paths := make([]string, len(nss))
	errs := make(chan error, len(nss))
	for i, ns := range nss {
		paths[i] = filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", name, i))
		a := append(append([]string{}, args...), "--client-index", fmt.Sprint(i), "--client-count", fmt.Sprint(len(nss)), "--out", paths[i])
		go func() {
			o, err := dbprobeIn(bin, ns.Name, 2*time.Minute, a...)
			if err == nil && o.code != 0 {
				err = fmt.Errorf("status %d", o.code)
			}
			if err != nil {
				err = fmt.Errorf("client %d (%s): %v\n%s", i, name, err, o.all())
			}
			errs <- err
		}()
	}
	for range nss {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// TestSeveralClientsInNamespaces runs three dbprobe clients, each in a
// network namespace of its own with its own address, against one
// PostgreSQL, as three machines would: a load and a run (workload D,
// with inserts) with --client-count 3 and --start-at, each merged. The
// merged counts must be the sums of the clients', the merged percentiles
// those of the clients' histograms merged here independently, and the
// table must hold exactly every client's records and inserts, none
// twice.
func TestSeveralClientsInNamespaces(t *testing.T) {
	needRoot(t, "ip")
	const clients, records = 3, 3000
	nss := make([]*netNS, clients)
	for i := range nss {
		nss[i] = newNetNS(t)
		// Every namespace reaches the server's address on the host side
		// of the first pair through its own: the host delivers it
		// locally, so no forwarding is needed.
		sh(t, "ip", "-n", nss[i].Name, "route", "add", "default", "via", nss[i].Host)
	}
	srv := startServer(t, instance.Postgres, instance.Options{Addr: nss[0].Host})
	dir := t.TempDir()
	common := []string{"--db", srv.URL(), "--allow-insecure-tls", "-q", "--workload", "d", "-p", fmt.Sprintf("recordcount=%d", records), "--threads", "2"}
	startAt := func() string { return time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339Nano) }

	loads := clientsInParallel(t, nss, dir, "load", append([]string{"load", "--start-at", startAt()}, common...)...)
	runs := clientsInParallel(t, nss, dir, "run", append([]string{"run", "--start-at", startAt(), "--duration", "4s"}, common...)...)

	for _, what := range []struct {
		name  string
		paths []string
	}{{"load", loads}, {"run", runs}} {
		merged := filepath.Join(dir, what.name+"-merged.jsonl")
		o := dbprobe(t, time.Minute, append(append([]string{"merge"}, what.paths...), "-o", merged)...)
		if o.code != 0 {
			t.Fatalf("merge of the %s: status %d\n%s", what.name, o.code, o.all())
		}
		checkMerged(t, what.name, what.paths, readResult(t, merged))
	}

	// The load: each client's own contiguous range, together every
	// record once.
	next := int64(0)
	inserted := map[string]int{}
	for i, p := range loads {
		c := readResult(t, p).Phases[0].Header.Client
		if c == nil || c.Index != i || c.InsertStart != next {
			t.Fatalf("load client %d: %+v, want its range to start at record %d", i, c, next)
		}
		for k := c.InsertStart; k < c.InsertStart+c.InsertCount; k++ {
			inserted[string(keygen.AppendKey(nil, k, true, 1))] = i
		}
		next += c.InsertCount
		if c.Monitors != (i == 0) {
			t.Fatalf("load client %d monitors: %v; only client 0 should", i, c.Monitors)
		}
		if c.Clock == nil {
			t.Fatalf("load client %d did not read PostgreSQL's clock", i)
		}
		// The same machine's clock on both sides: the offset is within
		// half the round trip that measured it (and the microseconds of
		// rounding).
		if off, half := abs(c.Clock.OffsetMicros), c.Clock.RTTMicros/2+2; off > half {
			t.Fatalf("load client %d: clock offset %d µs beyond half its round trip, %d µs", i, c.Clock.OffsetMicros, half)
		}
	}
	if next != records {
		t.Fatalf("the load clients' ranges end at record %d, want %d", next, records)
	}
	// The run: each client's inserts on key numbers of its own.
	for i, p := range runs {
		f := readResult(t, p)
		c := f.Phases[0].Header.Client
		if c.InsertStride != clients || c.InsertOffset != int64(i) {
			t.Fatalf("run client %d inserts with stride %d and offset %d", i, c.InsertStride, c.InsertOffset)
		}
		s := summaryOf(t, f, "run")
		if n := statusCount(s, "INSERT", "ERROR"); n > 0 {
			t.Fatalf("run client %d: %d inserts failed: the clients' keys collided?", i, n)
		}
		ok := statusCount(s, "INSERT", "OK")
		if ok == 0 {
			t.Fatalf("run client %d inserted nothing: the check of its key range proves nothing", i)
		}
		for j := range ok {
			key := string(keygen.AppendKey(nil, records+j*clients+int64(i), true, 1))
			if prev, dup := inserted[key]; dup {
				t.Fatalf("run client %d's insert %d is key %s, also client %d's", i, j, key, prev)
			}
			inserted[key] = i
		}
	}

	// The table holds exactly those keys, each once.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, "SELECT ycsb_key FROM usertable")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		if _, ok := inserted[k]; !ok {
			t.Fatalf("the table holds key %s, which no client's range has", k)
		}
		seen++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen != len(inserted) {
		t.Fatalf("the table holds %d rows, the clients' ranges %d keys", seen, len(inserted))
	}
	t.Logf("%d clients in namespaces %s…: %d rows loaded, %d inserted by the run", clients, nss[0].Name, records, seen-records)
}

// checkMerged checks a merged result against the clients' own: operation
// counts add up, and every series' figures are those of the clients'
// summary histograms merged here, apart from dbprobe merge's way (which
// goes through the intervals).
func checkMerged(t *testing.T, phase string, paths []string, merged *result.File) {
	t.Helper()
	m := summaryOf(t, merged, phase).Merge
	if m == nil {
		t.Fatalf("the merged %s has no merge summary", phase)
	}
	var ops int64
	raw := map[string]*hdr.Histogram{}
	for _, p := range paths {
		s := summaryOf(t, readResult(t, p), phase)
		ops += s.Ops
		for _, ser := range s.Series {
			if ser.Histogram == "" {
				continue
			}
			h, err := hdr.Decode([]byte(ser.Histogram))
			if err != nil {
				t.Fatal(err)
			}
			if raw[ser.Name] == nil {
				raw[ser.Name] = hdr.New(1, measure.HighestMicros, measure.SignificantFigures)
			}
			raw[ser.Name].Merge(h)
		}
	}
	if m.AllOps != ops {
		t.Fatalf("merged %s: %d operations, the clients' add up to %d", phase, m.AllOps, ops)
	}
	if len(m.AllSeries) == 0 {
		t.Fatalf("merged %s has no series", phase)
	}
	for _, ser := range m.AllSeries {
		h := raw[ser.Name]
		if h == nil {
			if ser.Count == 0 {
				continue
			}
			t.Fatalf("merged %s [%s] has %d values the clients never recorded", phase, ser.Name, ser.Count)
		}
		if ser.Count != h.TotalCount() || ser.MaxMicros != h.Max() || ser.MinMicros != h.Min() {
			t.Fatalf("merged %s [%s]: count %d min %d max %d; the clients' merged: %d %d %d", phase, ser.Name, ser.Count, ser.MinMicros, ser.MaxMicros, h.TotalCount(), h.Min(), h.Max())
		}
		for _, p := range ser.Percentiles {
			if want := h.ValueAtPercentile(p.Percentile); p.Micros != want {
				t.Fatalf("merged %s [%s] p%g = %d µs, the clients' histograms merged give %d", phase, ser.Name, p.Percentile, p.Micros, want)
			}
		}
	}
	if phase == "run" && (m.WindowStart.IsZero() || m.Clients[0].Diagnosis == nil) {
		t.Fatalf("merged run: window %s–%s, client 0's diagnosis %v: the clients started together and client 0 monitored", m.WindowStart, m.WindowEnd, m.Clients[0].Diagnosis)
	}
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

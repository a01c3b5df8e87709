package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// benchRecords is how many rows BenchmarkReadUpdate reads and updates.
const benchRecords = 5000

// cpuTime returns the user and system CPU this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReadUpdate is YCSB workload A's mix at the driver: half reads of
// every field, half updates of one field, by 32 sessions over a few thousand records with uniform
// keys, whatever GOMAXPROCS (-cpu) is. Besides ns/op (wall time per operation, all sessions together) it
// reports cpu-ns/op: this process's CPU per operation, the client cost that
// must stay below pgbench's. Run it without the race detector:
//
//	scripts/test --norace -run '^$' -bench ReadUpdate ./internal/driver/postgres/
func BenchmarkReadUpdate(b *testing.B) {
	for _, mode := range []string{"background", "cancelable"} {
		b.Run("ctx="+mode, func(b *testing.B) {
			benchmarkReadUpdate(b, mode == "cancelable")
		})
	}
}

func benchmarkReadUpdate(b *testing.B, cancelable bool) {
	const workers = 32
	const fields = 10
	// RunParallel starts parallelism × GOMAXPROCS goroutines.
	parallelism := (workers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
	_, db, tbl := setup(b, fields, driver.Options{Sessions: workers, BulkLoad: true})
	ctx := context.Background()
	if cancelable {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
	}

	keys := make([][]byte, benchRecords)
	values := make([][][]byte, benchRecords)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("user%010d", i))
		values[i] = make([][]byte, fields)
		for f := range values[i] {
			values[i][f] = []byte(fmt.Sprintf("%0100d", i*fields+f))
		}
	}
	loader := drivertest.Session(b, db, tbl)
	if err := loader.InsertBatch(ctx, keys, values); err != nil {
		b.Fatal(err)
	}
	sessions := make([]driver.Session, workers)
	for i := range sessions {
		sessions[i] = drivertest.Session(b, db, tbl)
	}
	var next atomic.Int32

	b.ReportAllocs()
	b.SetParallelism(parallelism)
	b.ResetTimer()
	cpu0 := cpuTime(b)
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)) - 1
		s := sessions[i%len(sessions)]
		rng := rand.New(rand.NewPCG(uint64(i), 42))
		read := make([][]byte, fields)
		for f := range read {
			read[f] = make([]byte, 0, 100)
		}
		update := [][]byte{[]byte(fmt.Sprintf("%0100d", i))}
		field := []int{0}
		for pb.Next() {
			key := keys[rng.IntN(len(keys))]
			if rng.IntN(2) == 0 {
				if err := s.Read(ctx, key, nil, read); err != nil {
					b.Error(err)
					return
				}
			} else {
				field[0] = rng.IntN(fields)
				update[0][rng.IntN(100)] = byte('a' + rng.IntN(26))
				if err := s.Update(ctx, key, field, update); err != nil {
					b.Error(err)
					return
				}
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkCopyBatch is storage bulk's load at the driver: one session
// loads batches of 1000 rows of one 1000-byte field through COPY, one
// COPY per batch. Besides MB/s it reports cpu-s/GB, this process's CPU
// per GB of payload (the server's is another process's): the client
// cost that bench/RESULTS.md holds against psql's \copy.
//
//	scripts/with-databases go test -run '^$' -bench CopyBatch -benchtime 300x ./internal/driver/postgres/
func BenchmarkCopyBatch(b *testing.B) {
	const rows, payload = 1000, 1000
	ctx := context.Background()
	db := drivertest.MustOpen(b, testdb.FreshPostgresDatabase(b), driver.Options{Sessions: 1, BulkLoad: true})
	tbl := drivertest.Table("usertable", 1)
	tbl.FieldLength = payload
	if err := db.CreateTable(ctx, tbl); err != nil {
		b.Fatalf("CreateTable: %v", err)
	}
	s := drivertest.Session(b, db, tbl)
	keys := make([][]byte, rows)
	values := make([][][]byte, rows)
	for i := range values {
		v := []byte(strings.Repeat("x", payload))
		v[i%payload] = 'y'
		values[i] = [][]byte{v}
	}
	b.SetBytes(rows * payload)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for n := range b.N {
		for i := range keys {
			keys[i] = fmt.Appendf(keys[i][:0], "user%012d", n*rows+i)
		}
		if err := s.InsertBatch(ctx, keys, values); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric((cpuTime(b)-cpu0).Seconds()/(float64(b.N)*rows*payload/1e9), "cpu-s/GB")
}

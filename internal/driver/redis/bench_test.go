package redis_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"dbprobe/internal/driver"
)

// benchRecords is how many records the benchmarks work on.
const benchRecords = 5000

// cpuTime returns the user and system CPU this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchValues(n, fields int) ([][]byte, [][][]byte) {
	keys := make([][]byte, n)
	values := make([][][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("user%010d", i))
		values[i] = make([][]byte, fields)
		for f := range values[i] {
			values[i][f] = []byte(fmt.Sprintf("%0100d", i*fields+f))
		}
	}
	return keys, values
}

// BenchmarkReadUpdate is YCSB workload A's mix at the driver: half HMGETs
// of every field, half update scripts on one field, by 32 sessions over a
// few thousand records with uniform keys. Besides ns/op (wall time per
// operation, all sessions together) it reports cpu-ns/op, this process's
// CPU per operation (the client's cost). Without the race detector:
//
//	scripts/test --norace -run '^$' -bench . ./internal/driver/redis/
func BenchmarkReadUpdate(b *testing.B) {
	const workers = 32
	const fields = 10
	parallelism := (workers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
	_, db, tbl := setup(b, fields, driver.Options{Sessions: workers, BulkLoad: true})
	ctx := context.Background()
	keys, values := benchValues(benchRecords, fields)
	if err := session(b, db, tbl).InsertBatch(ctx, keys, values); err != nil {
		b.Fatal(err)
	}
	sessions := make([]driver.Session, workers)
	for i := range sessions {
		sessions[i] = session(b, db, tbl)
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

// BenchmarkInsertBatch loads batches of 1000 records (YCSB's db.batchsize
// default here) through each path: one script, or WATCH/MULTI/EXEC.
// ns/op is per record.
func BenchmarkInsertBatch(b *testing.B) {
	const fields, batch = 10, 1000
	for _, bulk := range []bool{true, false} {
		b.Run(fmt.Sprintf("BulkLoad=%v", bulk), func(b *testing.B) {
			_, db, tbl := setup(b, fields, driver.Options{Sessions: 1, BulkLoad: bulk})
			ctx := context.Background()
			s := session(b, db, tbl)
			_, values := benchValues(batch, fields)
			keys := make([][]byte, batch)
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n += batch {
				for i := range keys {
					keys[i] = fmt.Appendf(keys[i][:0], "user%010d", n+i)
				}
				if err := s.InsertBatch(ctx, keys, values); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

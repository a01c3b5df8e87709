package drivertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// BenchReadUpdate is YCSB workload A's mix at the driver, for any driver's
// benchmark: it loads records into tbl (which must exist and be empty),
// then workers sessions do half reads of every field and half updates of
// one field on uniformly chosen keys. Besides ns/op (wall time per
// operation, all sessions together) it reports cpu-ns/op, this process's
// CPU per operation: the client's cost, which is what bench/compare puts
// side by side with the stock clients.
func BenchReadUpdate(b *testing.B, db driver.DB, tbl driver.Table, records, workers int) {
	// A run's context can be cancelled (Ctrl-C), and drivers may pay for
	// watching it; a context that cannot would hide that cost.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fields := len(tbl.Fields)
	keys := make([][]byte, records)
	values := make([][][]byte, records)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "user%010d", i)
		values[i] = make([][]byte, fields)
		for f := range values[i] {
			values[i][f] = fmt.Appendf(nil, "%0*d", tbl.FieldLength, i*fields+f)
		}
	}
	sessions := make([]driver.Session, workers)
	for i := range sessions {
		s, err := db.Session(ctx, tbl)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		sessions[i] = s
	}
	for start := 0; start < records; start += 1000 {
		end := min(start+1000, records)
		if err := sessions[0].InsertBatch(ctx, keys[start:end], values[start:end]); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int32
	b.ReportAllocs()
	b.SetParallelism((workers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	cpu0 := processCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)) - 1
		s := sessions[i%len(sessions)]
		rng := rand.New(rand.NewPCG(uint64(i), 42))
		read := make([][]byte, fields)
		update := [][]byte{fmt.Appendf(nil, "%0*d", tbl.FieldLength, i)}
		field := []int{0}
		for pb.Next() {
			key := keys[rng.IntN(len(keys))]
			var err error
			if rng.IntN(2) == 0 {
				err = s.Read(ctx, key, nil, read)
			} else {
				field[0] = rng.IntN(fields)
				err = s.Update(ctx, key, field, update)
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the user and system CPU this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

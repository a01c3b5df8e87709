package redis_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
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

// BenchmarkReadUpdate is YCSB workload A's mix at the driver by 32
// sessions; cpu-ns/op is the client's cost per operation. Without the race
// detector:
//
//	scripts/test --norace -run '^$' -bench . ./internal/driver/redis/
func BenchmarkReadUpdate(b *testing.B) {
	const workers = 32
	_, db, tbl := setup(b, 10, driver.Options{Sessions: workers, BulkLoad: true})
	drivertest.BenchReadUpdate(b, db, tbl, benchRecords, workers)
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
			s := drivertest.Session(b, db, tbl)
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

package mysql_test

import (
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
)

// BenchmarkReadUpdate is workload A's mix by 32 sessions; cpu-ns/op is the
// client's cost per operation. Without the race detector:
//
//	scripts/test --norace -run '^$' -bench . ./internal/driver/mysql/
func BenchmarkReadUpdate(b *testing.B) {
	const workers = 32
	_, _, db, tbl := setup(b, 10, driver.Options{Sessions: workers, BulkLoad: true})
	drivertest.BenchReadUpdate(b, db, tbl, 5000, workers)
}

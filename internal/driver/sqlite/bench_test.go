package sqlite

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// The shape of YCSB workload A as the end-to-end target measures it:
// 100,000 records of 10 fields of 100 bytes, 8 sessions, WAL with
// synchronous=NORMAL (the defaults).
const (
	benchRecords  = 100_000
	benchSessions = 8
	benchFields   = 10
	benchFieldLen = 100
	benchBatch    = 1000
)

var benchTable = func() driver.Table {
	fields := make([]string, benchFields)
	for i := range fields {
		fields[i] = "FIELD" + strconv.Itoa(i)
	}
	return driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: fields, FieldLength: benchFieldLen}
}()

// benchKey writes YCSB's hashed key for record i ("user" and a hash of i,
// as insertorder=hashed does) into buf.
func benchKey(buf []byte, i uint64) []byte {
	h := fnv.New64a()
	var b [8]byte
	for j := range b {
		b[j] = byte(i >> (8 * j))
	}
	h.Write(b[:])
	return strconv.AppendUint(append(buf[:0], "user"...), h.Sum64(), 10)
}

// The loaded database is kept between the runs of a benchmark (the testing
// package calls it again for each b.N), so the 100,000 records are loaded
// once per process.
var (
	benchOnce sync.Once
	benchDir  string
	benchKeep string
	benchErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

func loadBenchDB(b *testing.B) string {
	benchOnce.Do(func() {
		// DBPROBE_BENCH_DIR keeps the loaded database between runs, to
		// compare settings without loading again.
		if keep := os.Getenv("DBPROBE_BENCH_DIR"); keep != "" {
			if _, err := os.Stat(filepath.Join(keep, "workload-a.db")); err == nil {
				benchKeep = keep
				return
			}
			benchKeep = keep
			benchErr = os.MkdirAll(keep, 0o755)
		} else {
			benchDir, benchErr = os.MkdirTemp("", "dbprobe-bench-")
		}
		if benchErr != nil {
			return
		}
		path := filepath.Join(benchPath(), "workload-a.db")
		cfg := config{path: path, journalMode: defaultJournalMode, synchronous: defaultSynchronous, busyTimeoutMS: defaultBusyTimeout}
		ctx := context.Background()
		start := time.Now()
		d, err := open(ctx, cfg, driver.Options{Sessions: 1, BulkLoad: true})
		if err != nil {
			benchErr = err
			return
		}
		defer d.Close()
		if benchErr = d.CreateTable(ctx, benchTable); benchErr != nil {
			return
		}
		s, err := d.Session(ctx, benchTable)
		if err != nil {
			benchErr = err
			return
		}
		defer s.Close()
		keys := make([][]byte, benchBatch)
		values := make([][][]byte, benchBatch)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range values {
			values[i] = make([][]byte, benchFields)
		}
		for first := 0; first < benchRecords; first += benchBatch {
			for i := range keys {
				keys[i] = benchKey(keys[i], uint64(first+i))
				for f := range values[i] {
					values[i][f] = randomValue(rng, values[i][f])
				}
			}
			if benchErr = s.InsertBatch(ctx, keys, values); benchErr != nil {
				return
			}
		}
		fmt.Fprintf(os.Stderr, "loaded %d records in %v\n", benchRecords, time.Since(start).Round(time.Millisecond))
	})
	if benchErr != nil {
		b.Fatalf("load: %v", benchErr)
	}
	return filepath.Join(benchPath(), "workload-a.db")
}

func benchPath() string {
	if benchKeep != "" {
		return benchKeep
	}
	return benchDir
}

// randomValue fills buf with benchFieldLen printable bytes.
func randomValue(rng *rand.Rand, buf []byte) []byte {
	buf = buf[:0]
	for range benchFieldLen {
		buf = append(buf, byte(' '+rng.IntN(95)))
	}
	return buf
}

// BenchmarkWorkloadA runs YCSB workload A's mix, half reads of a whole
// record and half updates of one field, from 8 sessions on uniformly random
// keys, and reports the throughput of all sessions together as ops/s.
func BenchmarkWorkloadA(b *testing.B) {
	path := loadBenchDB(b)
	ctx := context.Background()
	cfg := config{path: path, journalMode: defaultJournalMode, synchronous: defaultSynchronous, busyTimeoutMS: defaultBusyTimeout}
	d, err := open(ctx, cfg, driver.Options{Sessions: benchSessions})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	sessions := make([]driver.Session, benchSessions)
	for i := range sessions {
		if sessions[i], err = d.Session(ctx, benchTable); err != nil {
			b.Fatal(err)
		}
		defer sessions[i].Close()
	}

	var wg sync.WaitGroup
	errs := make(chan error, benchSessions)
	b.ReportAllocs()
	b.ResetTimer()
	cpuStart := cpuTime()
	start := time.Now()
	for w, s := range sessions {
		ops := b.N / benchSessions
		if w < b.N%benchSessions {
			ops++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			// Update values are cut from a random buffer, so that making
			// them costs a copy rather than 100 calls to the generator.
			noise := randomValue(rng, make([]byte, 0, benchFieldLen))
			for len(noise) < 8192 {
				noise = append(noise, randomValue(rng, nil)...)
			}
			key := make([]byte, 0, 32)
			values := make([][]byte, benchFields)
			field := []int{0}
			update := [][]byte{make([]byte, 0, benchFieldLen)}
			for range ops {
				key = benchKey(key, rng.Uint64N(benchRecords))
				if rng.IntN(2) == 0 {
					if err := s.Read(ctx, key, nil, values); err != nil {
						errs <- fmt.Errorf("read %s: %w", key, err)
						return
					}
				} else {
					field[0] = rng.IntN(benchFields)
					off := rng.IntN(len(noise) - benchFieldLen)
					update[0] = append(update[0][:0], noise[off:off+benchFieldLen]...)
					if err := s.Update(ctx, key, field, update); err != nil {
						errs <- fmt.Errorf("update %s: %w", key, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpuStart
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	// On a shared machine the wall-clock rate moves with other people's
	// load; the process's CPU time per operation does not, and says what the
	// rate would be with the cores to ourselves.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// openBench opens the loaded database with sessions sessions.
func openBench(b *testing.B, n int) (*db, []driver.Session) {
	path := loadBenchDB(b)
	ctx := context.Background()
	cfg := config{path: path, journalMode: defaultJournalMode, synchronous: defaultSynchronous, busyTimeoutMS: defaultBusyTimeout}
	d, err := open(ctx, cfg, driver.Options{Sessions: n})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	sessions := make([]driver.Session, n)
	for i := range sessions {
		if sessions[i], err = d.Session(ctx, benchTable); err != nil {
			b.Fatal(err)
		}
		s := sessions[i]
		b.Cleanup(func() { s.Close() })
	}
	return d.(*db), sessions
}

// BenchmarkReadOne is one session reading whole records, nothing else running.
func BenchmarkReadOne(b *testing.B) {
	_, ss := openBench(b, 1)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 1))
	key := make([]byte, 0, 32)
	values := make([][]byte, benchFields)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		key = benchKey(key, rng.Uint64N(benchRecords))
		if err := ss[0].Read(ctx, key, nil, values); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdateOne is one session updating one field, nothing else running.
func BenchmarkUpdateOne(b *testing.B) {
	_, ss := openBench(b, 1)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 1))
	key := make([]byte, 0, 32)
	field := []int{0}
	update := [][]byte{make([]byte, 0, benchFieldLen)}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		key = benchKey(key, rng.Uint64N(benchRecords))
		field[0] = rng.IntN(benchFields)
		update[0] = randomValue(rng, update[0])
		if err := ss[0].Update(ctx, key, field, update); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadUpdateOne alternates reads and updates from one session:
// every read then follows a commit, as under workload A.
func BenchmarkReadUpdateOne(b *testing.B) {
	_, ss := openBench(b, 1)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 1))
	key := make([]byte, 0, 32)
	values := make([][]byte, benchFields)
	field := []int{0}
	update := [][]byte{make([]byte, 0, benchFieldLen)}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		key = benchKey(key, rng.Uint64N(benchRecords))
		i++
		if i%2 == 0 {
			if err := ss[0].Read(ctx, key, nil, values); err != nil {
				b.Fatal(err)
			}
			continue
		}
		field[0] = rng.IntN(benchFields)
		update[0] = randomValue(rng, update[0])
		if err := ss[0].Update(ctx, key, field, update); err != nil {
			b.Fatal(err)
		}
	}
}

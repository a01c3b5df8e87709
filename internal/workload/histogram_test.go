package workload

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func readHistogram(t *testing.T, name string) (*Histogram, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "histogram", name))
	if err != nil {
		t.Fatal(err)
	}
	return ParseHistogram(bytes.NewReader(data))
}

// ycsbLength is YCSB's HistogramGenerator.nextValue written out as it is,
// loop and all, for the draw u: the reference the histogram must match.
func ycsbLength(counts []int64, blockSize, u int64) int64 {
	number := u
	i := 0
	for ; i < len(counts)-1; i++ {
		number -= counts[i]
		if number <= 0 {
			return int64(i+1) * blockSize
		}
	}
	return int64(i) * blockSize
}

func TestParseHistogram(t *testing.T) {
	tests := []struct {
		file      string
		blockSize int
		buckets   int
		max       int
		mean      float64
	}{
		// 100 draws: 0…10 give 8, 11…40 give 16, 41…99 give 32 (bucket 2
		// is empty; the last bucket yields bucket 3's length).
		{"valid.txt", 8, 5, 32, (11*8 + 30*16 + 59*32) / 100.0},
		// The same with CRLF line ends, blank lines and extra columns.
		{"crlf_blank_extra.txt", 8, 5, 32, (11*8 + 30*16 + 59*32) / 100.0},
		// Trailing empty buckets draw nothing: the columns need only 200.
		{"empty_tail.txt", 100, 4, 200, (6*100 + 4*200) / 10.0},
		// Two buckets always give one block in YCSB.
		{"two_buckets.txt", 1024, 2, 1024, 1024},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			h, err := readHistogram(t, tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if h.BlockSize() != tt.blockSize || h.Buckets() != tt.buckets || h.MaxLength() != tt.max ||
				h.MinLength() != tt.blockSize || math.Abs(h.Mean()-tt.mean) > 1e-9 {
				t.Fatalf("block %d, buckets %d, lengths %d to %d, mean %v; want block %d, %d buckets, up to %d, mean %v",
					h.BlockSize(), h.Buckets(), h.MinLength(), h.MaxLength(), h.Mean(), tt.blockSize, tt.buckets, tt.max, tt.mean)
			}
		})
	}
}

func TestParseHistogramRefusesBadFiles(t *testing.T) {
	tests := []struct{ file, want string }{
		{"empty.txt", "the file is empty"},
		{"no_blocksize.txt", `line 1 is not BlockSize<TAB>N`},
		{"blocksize_zero.txt", "line 1: BlockSize \"0\" is not a whole number of bytes from 1"},
		{"blocksize_negative.txt", "line 1: BlockSize \"-64\" is not a whole number of bytes from 1"},
		{"spaces.txt", `line 2 is not BUCKET<TAB>COUNT (the two numbers are separated by a tab)`},
		{"out_of_order.txt", "line 3: bucket 2 where bucket 1 was expected"},
		{"only_blocksize.txt", "no buckets after the BlockSize line"},
		{"one_bucket.txt", "only one bucket"},
		{"all_zero.txt", "every bucket count is 0"},
		{"bad_count.txt", `line 3: count "many" of bucket 1 is not a whole number`},
		{"negative_count.txt", `line 3: count "-3" of bucket 1 is not a whole number from 0`},
		{"too_long.txt", "line 4: bucket 2 of 2147483647 bytes makes fields longer than 2147483647 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			h, err := readHistogram(t, tt.file)
			if err == nil {
				t.Fatalf("accepted as %v", h)
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q, want one line containing %q", err, tt.want)
			}
		})
	}
	long := "BlockSize\t1\n0\t" + strings.Repeat("1", 5000) + "\n"
	if _, err := ParseHistogram(strings.NewReader(long)); err == nil || !strings.Contains(err.Error(), "line 2 is longer than") {
		t.Fatalf("a 5000-byte line: %v, want it refused by line number", err)
	}
}

// Every draw gives the length YCSB's loop gives for it.
func TestHistogramDrawIsYCSBs(t *testing.T) {
	for _, counts := range [][]int64{
		{10, 30, 0, 40, 20}, {1, 0}, {0, 5}, {0, 0, 7}, {5, 5, 0, 0}, {3, 0, 0, 0, 1}, {1, 1, 1, 1, 1, 1},
	} {
		h := histogramOf(t, 16, counts)
		for u := range h.area {
			if got, want := h.lengthAt(u), ycsbLength(counts, 16, u); got != want {
				t.Fatalf("counts %v, draw %d: length %d, YCSB's %d", counts, u, got, want)
			}
		}
	}
}

func histogramOf(t *testing.T, blockSize int, counts []int64) *Histogram {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "BlockSize\t%d\n", blockSize)
	for i, c := range counts {
		fmt.Fprintf(&b, "%d\t%d\n", i, c)
	}
	h, err := ParseHistogram(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Lengths drawn by a generator follow the histogram as YCSB draws it:
// each length's share within 5 standard deviations of YCSB's
// probability, found by running YCSB's loop over every draw. The
// tolerance is checked to tell YCSB's mapping from the one the file seems
// to say (bucket i gives (i+1)·BlockSize with probability count_i/area),
// so a generator following that one would fail.
func TestFieldLengthsFollowTheHistogram(t *testing.T) {
	h, err := readHistogram(t, "valid.txt")
	if err != nil {
		t.Fatal(err)
	}
	counts := []int64{10, 30, 0, 40, 20}
	want := map[int64]float64{}
	for u := range int64(100) {
		want[ycsbLength(counts, 8, u)] += 0.01
	}
	naive := map[int64]float64{8: 0.1, 16: 0.3, 24: 0, 32: 0.4, 40: 0.2}

	s := coreSpec()
	s.FieldLengthDistribution = HistogramLength
	s.FieldLengthHistogram = h
	s.Proportions = [5]float64{0, 1, 0, 0, 0}
	s.WriteAllFields = true
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.MaxFieldLength() != 32 {
		t.Fatalf("MaxFieldLength %d, want 32: the histogram, not fieldlength=%d, sizes the columns", s.MaxFieldLength(), s.FieldLength)
	}
	g := NewGenerator(s, NewShared(s), 11)
	const n = 200000
	got := map[int64]float64{}
	var op Op
	drawn := 0
	for drawn < n {
		g.Next(&op)
		for _, v := range op.Values {
			got[int64(len(v))]++
			drawn++
		}
	}
	total := float64(drawn)
	powerful := false
	for _, length := range []int64{8, 16, 24, 32, 40} {
		p := want[length]
		if math.Abs(h.probability(int(length))-p) > 1e-12 {
			t.Errorf("probability(%d) = %v, YCSB's %v", length, h.probability(int(length)), p)
		}
		tol := 5 * math.Sqrt(total*max(p, 1/total)*(1-p))
		if d := math.Abs(got[length] - total*p); d > tol {
			t.Errorf("length %d: %.0f of %.0f values, want %.0f ± %.0f", length, got[length], total, total*p, tol)
		}
		if math.Abs(total*naive[length]-total*p) > tol {
			powerful = true
		}
	}
	if len(got) > 3 {
		t.Errorf("lengths drawn %v, want only 8, 16 and 32", got)
	}
	if !powerful {
		t.Fatal("the tolerance cannot tell YCSB's mapping from the naive one: the test could not fail")
	}
}

// A histogram longer than the pool of random bytes still gets whole
// values.
func TestLongHistogramValues(t *testing.T) {
	s := coreSpec()
	s.FieldLengthDistribution = HistogramLength
	s.FieldLengthHistogram = histogramOf(t, 50000, []int64{1, 1, 1, 1})
	g := NewGenerator(s, NewShared(s), 1)
	longest := 0
	for k := range int64(50) {
		_, vals := g.Record(k)
		for _, v := range vals {
			if len(v)%50000 != 0 || len(v) < 50000 || len(v) > 150000 {
				t.Fatalf("value of %d bytes", len(v))
			}
			longest = max(longest, len(v))
		}
	}
	if longest != 150000 || s.MaxFieldLength() != 150000 {
		t.Fatalf("longest value %d, MaxFieldLength %d; want 150000", longest, s.MaxFieldLength())
	}
}

func TestHistogramNeedsItsFile(t *testing.T) {
	s := coreSpec()
	s.FieldLengthDistribution = HistogramLength
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "fieldlengthhistogram") {
		t.Fatalf("histogram without a file: %v", err)
	}
	if d, err := ParseScanLengthDistribution("histogram"); err == nil {
		t.Fatalf("scanlengthdistribution=histogram accepted as %v; YCSB takes uniform or zipfian", d)
	}
	if d, err := ParseFieldLengthDistribution(" Histogram "); err != nil || d != HistogramLength {
		t.Fatalf("fieldlengthdistribution=histogram: %v, %v", d, err)
	}
}

// Whatever the file holds, it is refused in one line or read into a
// histogram that draws YCSB's lengths, from one block up to MaxLength,
// and reads back the same when written out again.
func FuzzParseHistogram(f *testing.F) {
	entries, err := os.ReadDir(filepath.Join("testdata", "histogram"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("testdata", "histogram", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("BlockSize\t+3\n+0\t007\n1\t2147483647\n2\t1\t\t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHistogram(bytes.NewReader(data))
		if err != nil {
			if err.Error() == "" || strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error %q is not one line", err)
			}
			return
		}
		if h.Buckets() < 2 || h.area <= 0 || h.blockSize < 1 || h.MaxLength() > MaxHistogramLength ||
			h.MinLength() != h.BlockSize() || h.MaxLength() < h.MinLength() {
			t.Fatalf("accepted %d buckets of %d, area %d, lengths %d to %d", h.Buckets(), h.blockSize, h.area, h.MinLength(), h.MaxLength())
		}
		if m := h.Mean(); m < float64(h.MinLength())-1e-6 || m > float64(h.MaxLength())*(1+1e-9) {
			t.Fatalf("mean %v outside %d…%d", m, h.MinLength(), h.MaxLength())
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for range 20 {
			u := rng.Int64N(h.area)
			got := h.lengthAt(u)
			if want := ycsbLength(h.counts, h.blockSize, u); got != want {
				t.Fatalf("draw %d: length %d, YCSB's %d", u, got, want)
			}
			if got < int64(h.MinLength()) || got > int64(h.MaxLength()) || h.probability(int(got)) <= 0 {
				t.Fatalf("draw %d: length %d outside %d…%d or of probability 0", u, got, h.MinLength(), h.MaxLength())
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "BlockSize\t%d\n", h.blockSize)
		for i, c := range h.counts {
			fmt.Fprintf(&b, "%d\t%d\n", i, c)
		}
		again, err := ParseHistogram(strings.NewReader(b.String()))
		if err != nil || !slices.Equal(again.counts, h.counts) || again.blockSize != h.blockSize {
			t.Fatalf("written out and read again: %v, %v", again, err)
		}
	})
}

package workload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Histogram draws field lengths from a histogram file, as YCSB's
// HistogramGenerator does for fieldlengthdistribution=histogram. The file
// is YCSB's: a first line "BlockSize<TAB>B", then one line per bucket,
// "BUCKET<TAB>COUNT", the buckets numbered 0, 1, 2… in order (YCSB stores
// each count at its bucket's number in a list, so any other order is
// refused here rather than reshuffled). Columns after the second are
// ignored, as YCSB ignores them.
//
// A draw is YCSB's, quirks included, so that a file gives the lengths it
// gives in YCSB: u is drawn uniformly from [0, area), area being the sum
// of the counts, and the length is (i+1)·B for the first bucket i, among
// all but the last, whose running sum reaches u; when none does, it is
// (n-1)·B for n buckets. So bucket i yields (i+1)·B (a bucket holds the
// lengths up to its upper end), bucket 0 has one draw in area more than
// its count, and the last bucket yields the same length as the one before
// it, one block short of its upper end. fieldlength and minfieldlength
// play no part: the histogram alone bounds the lengths.
type Histogram struct {
	blockSize int64
	counts    []int64
	// cum[i] is the sum of counts[0..i], for every bucket but the last:
	// the thresholds YCSB's loop compares the draw with.
	cum  []int64
	area int64
	// draws[i] is how many of the area's draws yield (i+1)·blockSize.
	draws []int64
}

// MaxHistogramLength is the longest field length a histogram may yield:
// the most a field length holds anywhere else (fieldlength is a Java int
// in YCSB, and a whole number within ±2147483647 here).
const MaxHistogramLength = math.MaxInt32

// maxHistogramLine bounds a line of a histogram file; a real line is a
// few digits.
const maxHistogramLine = 4096

// ParseHistogram reads a histogram file. An error names the line and
// what is wrong with it, on one line.
func ParseHistogram(r io.Reader) (*Histogram, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxHistogramLine)
	h := &Histogram{}
	n := 0
	for sc.Scan() {
		n++
		// Java's readLine, which YCSB reads with, drops a \r before the
		// \n; blank lines, which YCSB fails on, are passed over.
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := h.addLine(n, line); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d is longer than %d bytes: not a histogram file", n+1, maxHistogramLine)
		}
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	switch {
	case h.blockSize == 0:
		return nil, errors.New("the file is empty; a histogram starts with a BlockSize<TAB>N line, then BUCKET<TAB>COUNT lines")
	case len(h.counts) == 0:
		return nil, errors.New("no buckets after the BlockSize line: the histogram is empty; add BUCKET<TAB>COUNT lines, from bucket 0")
	case len(h.counts) == 1:
		return nil, errors.New("only one bucket: YCSB draws every length as 0 from a one-bucket histogram; give at least two buckets")
	case h.area == 0:
		return nil, errors.New("every bucket count is 0: the histogram is empty")
	}
	h.finish()
	return h, nil
}

// addLine reads one non-blank line: the BlockSize line first, then the
// buckets.
func (h *Histogram) addLine(n int, line string) error {
	cols := strings.Split(line, "\t")
	if h.blockSize == 0 {
		if len(cols) < 2 || strings.TrimSpace(cols[0]) != "BlockSize" {
			return fmt.Errorf("line %d is not BlockSize<TAB>N, the line a histogram file starts with", n)
		}
		b, err := strconv.ParseInt(strings.TrimSpace(cols[1]), 10, 64)
		if err != nil || b < 1 || b > math.MaxInt32 {
			return fmt.Errorf("line %d: BlockSize %s is not a whole number of bytes from 1 to %d", n, shownLine(cols[1]), math.MaxInt32)
		}
		h.blockSize = b
		return nil
	}
	if len(cols) < 2 {
		return fmt.Errorf("line %d is not BUCKET<TAB>COUNT (the two numbers are separated by a tab)", n)
	}
	want := int64(len(h.counts))
	bucket, err := strconv.ParseInt(strings.TrimSpace(cols[0]), 10, 64)
	if err != nil {
		return fmt.Errorf("line %d: bucket %s is not a whole number", n, shownLine(cols[0]))
	}
	if bucket != want {
		return fmt.Errorf("line %d: bucket %d where bucket %d was expected: list the buckets 0, 1, 2… in order, one per line", n, bucket, want)
	}
	count, err := strconv.ParseInt(strings.TrimSpace(cols[1]), 10, 64)
	if err != nil || count < 0 || count > math.MaxInt32 {
		return fmt.Errorf("line %d: count %s of bucket %d is not a whole number from 0 to %d", n, shownLine(cols[1]), bucket, math.MaxInt32)
	}
	// With n buckets the longest length drawn is (n-1)·BlockSize.
	if bucket > MaxHistogramLength/h.blockSize {
		return fmt.Errorf("line %d: bucket %d of %d bytes makes fields longer than %d bytes", n, bucket, h.blockSize, MaxHistogramLength)
	}
	h.counts = append(h.counts, count)
	h.area += count // at most 2^31 buckets of 2^31: no overflow
	return nil
}

// finish computes the thresholds of the draws and how many draws each
// length gets.
func (h *Histogram) finish() {
	last := len(h.counts) - 1
	h.cum = make([]int64, last)
	h.draws = make([]int64, last)
	var sum, taken int64
	for i := range last {
		sum += h.counts[i]
		h.cum[i] = sum
		// The draws u with cum[i-1] < u <= cum[i] (0 <= u for bucket 0),
		// within [0, area).
		lo := int64(0)
		if i > 0 {
			lo = h.cum[i-1] + 1
		}
		if hi := min(sum, h.area-1); hi >= lo {
			h.draws[i] = hi - lo + 1
			taken += h.draws[i]
		}
	}
	// The draws beyond every threshold yield (n-1)·B, bucket n-2's length.
	h.draws[last-1] += h.area - taken
}

// Next draws one length; it is a keygen.Chooser.
func (h *Histogram) Next(rng *rand.Rand) int64 {
	return h.lengthAt(rng.Int64N(h.area))
}

// lengthAt is the length YCSB's loop returns for the draw u in [0, area).
func (h *Histogram) lengthAt(u int64) int64 {
	i := sort.Search(len(h.cum), func(i int) bool { return h.cum[i] >= u })
	return int64(min(i+1, len(h.counts)-1)) * h.blockSize
}

// BlockSize returns the histogram's block size in bytes.
func (h *Histogram) BlockSize() int { return int(h.blockSize) }

// Buckets returns the number of buckets in the file.
func (h *Histogram) Buckets() int { return len(h.counts) }

// MinLength returns the shortest length drawn: always one block, since
// the draw 0 yields bucket 0's length.
func (h *Histogram) MinLength() int { return int(h.blockSize) }

// MaxLength returns the longest length drawn, which sizes the field
// columns.
func (h *Histogram) MaxLength() int {
	for i := len(h.draws) - 1; i > 0; i-- {
		if h.draws[i] > 0 {
			return (i + 1) * int(h.blockSize)
		}
	}
	return int(h.blockSize)
}

// Mean returns the mean length drawn. It is the mean of the lengths as
// they are drawn, not what YCSB's HistogramGenerator.mean() reports
// (B·Σ i·count_i / area, one block less, and unused by the core
// workload).
func (h *Histogram) Mean() float64 {
	var sum float64
	for i, d := range h.draws {
		sum += float64(d) * float64(int64(i+1)*h.blockSize)
	}
	return sum / float64(h.area)
}

// probability returns the probability that a draw yields length bytes.
func (h *Histogram) probability(length int) float64 {
	if length <= 0 || int64(length)%h.blockSize != 0 {
		return 0
	}
	i := int64(length)/h.blockSize - 1
	if i >= int64(len(h.draws)) {
		return 0
	}
	return float64(h.draws[i]) / float64(h.area)
}

// String summarises the histogram for the header.
func (h *Histogram) String() string {
	return fmt.Sprintf("%d buckets of %d bytes; field lengths %d to %d bytes, mean %.1f",
		h.Buckets(), h.blockSize, h.MinLength(), h.MaxLength(), h.Mean())
}

// shownLine quotes part of a refused line in ASCII and cuts it short, so
// an error stays one readable line whatever the file holds.
func shownLine(s string) string {
	const most = 40
	if len(s) > most {
		return strconv.QuoteToASCII(s[:most]) + "…"
	}
	return strconv.QuoteToASCII(s)
}

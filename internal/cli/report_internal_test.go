package cli

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/report/synth"
	"github.com/dbprobe/dbprobe/internal/result"
)

// TestWithoutIntervalHistograms: a result read with its seconds'
// histograms cut out of the bytes is the result read whole with them
// dropped afterwards, record for record; the summary keeps its own.
func TestWithoutIntervalHistograms(t *testing.T) {
	var buf bytes.Buffer
	if err := synth.Write(&buf, synth.Options{Duration: 20 * time.Second, Outage: 3 * time.Second, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	orig := bytes.Clone(data)
	cut := withoutIntervalHistograms(data)
	if !bytes.Equal(data, orig) {
		t.Fatal("the input was changed")
	}
	for _, line := range bytes.Split(cut, []byte("\n")) {
		if bytes.HasPrefix(line, intervalPrefix) && bytes.Contains(line, []byte(`"histogram"`)) {
			t.Fatalf("an interval keeps a histogram: %.200s", line)
		}
	}
	got, err := result.Read(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	want, err := result.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if want.Phases[0].Summary.Series[0].Histogram == "" {
		t.Fatal("the fixture's summary has no histogram")
	}
	dropIntervalHistograms(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read with the histograms cut differs from read whole and dropped")
	}

	// A last line cut inside a histogram stays cut: result.Read says so.
	i := bytes.LastIndex(data[:len(data)-200], []byte(`"histogram":"`))
	short := withoutIntervalHistograms(data[:i+40])
	f, err := result.Read(bytes.NewReader(short))
	if err != nil || !f.Truncated {
		t.Errorf("a file cut inside a histogram: %v, truncated %v", err, f != nil && f.Truncated)
	}
}

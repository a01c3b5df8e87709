package result

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzRead feeds Read arbitrary bytes: it must return a File or an error,
// never panic, and what it accepts must survive being written again. A cut
// last line must be all it ignores, and Repair must turn whatever Read
// accepts into a whole file with every phase summarized.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	_ = w.Header(sampleHeader("run"))
	_ = w.Interval(sampleInterval("run", 0, true))
	_ = w.Summary(sampleSummary("run"))
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()/2])
	f.Add([]byte(`{"type":"header","schema_version":1}` + "\n" + `{"type":"summary","runtime_ms":-1.5e3,"throughput_ops_per_sec":null}`))
	f.Add([]byte(`{"type":"interval","elapsed_ms":99999999999999999999}`))
	f.Add([]byte("\n\n{}\n"))
	run, _ := simulatedRun(&testing.T{})
	killed := resultFile(&testing.T{}, []Phase{run})
	f.Add(killed)
	f.Add(append(bytes.Clone(killed), killed[:100]...))
	check := resultFile(&testing.T{}, []Phase{sampleCheck()})
	f.Add(check)
	f.Add(check[:bytes.LastIndexByte(check, '{')+40]) // killed while writing its summary
	f.Add([]byte(`{"type":"header","schema_version":1,"experiment":"durability"}` + "\n" + `{"type":"cycle","lost":-1,"recovery_ms":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return // keep each run short: size adds nothing to the parser's paths
		}
		file, err := Read(bytes.NewReader(data))
		if err != nil {
			if file != nil {
				t.Fatalf("both a file and an error: %v", err)
			}
			return
		}
		if file == nil {
			t.Fatal("neither a file nor an error")
		}
		// Whatever was accepted can be written and read back.
		var out bytes.Buffer
		w := NewWriter(&out)
		for _, p := range file.Phases {
			if err := w.Header(p.Header); err != nil {
				t.Fatalf("rewriting header: %v", err)
			}
			for _, iv := range p.Intervals {
				if err := w.Interval(iv); err != nil {
					t.Fatalf("rewriting interval: %v", err)
				}
			}
			for _, c := range p.Cycles {
				if err := w.Cycle(c); err != nil {
					t.Fatalf("rewriting cycle: %v", err)
				}
			}
			if p.Summary != nil {
				if err := w.Summary(*p.Summary); err != nil {
					t.Fatalf("rewriting summary: %v", err)
				}
			}
		}
		again, err := Read(&out)
		if err != nil {
			t.Fatalf("reading back what was rewritten: %v", err)
		}
		if countRecords(again) != countRecords(file) {
			t.Fatalf("rewritten file has %d records, want %d", countRecords(again), countRecords(file))
		}

		if file.Truncated {
			whole, err := Read(bytes.NewReader(data[:bytes.LastIndexByte(data, '\n')+1]))
			if err != nil || whole.Truncated || countRecords(whole) != countRecords(file) {
				t.Fatalf("the complete lines alone read differently: %v", err)
			}
		}
		repaired, recovered, _, err := Repair(data, nil)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "result: phase ") {
				t.Fatalf("Repair refused what Read accepted: %v", err)
			}
			return // intervals that cannot be added up (a bad histogram)
		}
		if len(recovered) == 0 {
			if !bytes.Equal(repaired, data) {
				t.Fatal("Repair changed a file with nothing to recover")
			}
			return
		}
		fixed, err := Read(bytes.NewReader(repaired))
		if err != nil || fixed.Truncated || len(fixed.Phases) != len(file.Phases) {
			t.Fatalf("repaired file: %v, truncated %v", err, fixed != nil && fixed.Truncated)
		}
		for i, p := range fixed.Phases {
			if p.Summary == nil || len(p.Intervals) != len(file.Phases[i].Intervals) {
				t.Fatalf("repaired phase %d: %d intervals, summary %v", i, len(p.Intervals), p.Summary != nil)
			}
		}
	})
}

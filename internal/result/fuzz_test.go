package result

import (
	"bytes"
	"testing"
)

// FuzzRead feeds Read arbitrary bytes: it must return a File or an error,
// never panic, and what it accepts must survive being written again.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	_ = w.WriteHeader(sampleHeader("run"))
	_ = w.WriteInterval(sampleInterval("run", 0, true))
	_ = w.WriteSummary(sampleSummary("run"))
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()/2])
	f.Add([]byte(`{"type":"header","schema_version":1}` + "\n" + `{"type":"summary","runtime_ms":-1.5e3,"throughput_ops_per_sec":null}`))
	f.Add([]byte(`{"type":"interval","elapsed_ms":99999999999999999999}`))
	f.Add([]byte("\n\n{}\n"))
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
			if err := w.WriteHeader(p.Header); err != nil {
				t.Fatalf("rewriting header: %v", err)
			}
			for _, iv := range p.Intervals {
				if err := w.WriteInterval(iv); err != nil {
					t.Fatalf("rewriting interval: %v", err)
				}
			}
			if p.Summary != nil {
				if err := w.WriteSummary(*p.Summary); err != nil {
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
	})
}

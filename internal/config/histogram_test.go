package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/workload"
)

// writeFile writes text to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fieldlengthdistribution=histogram reads YCSB's default hist.txt from
// the working directory, and the header shows the file and what it holds.
func TestFieldLengthHistogram(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeFile(t, dir, "hist.txt", "BlockSize\t8\n0\t10\n1\t30\n2\t0\n3\t40\n4\t20\n")
	c, err := resolveOne("fieldlengthdistribution", "histogram")
	if err != nil {
		t.Fatal(err)
	}
	s := c.Workload
	if s.FieldLengthDistribution != workload.HistogramLength || s.FieldLengthHistogram == nil || s.MaxFieldLength() != 32 {
		t.Fatalf("distribution %v, histogram %v, longest %d; want the histogram of hist.txt, up to 32 bytes",
			s.FieldLengthDistribution, s.FieldLengthHistogram, s.MaxFieldLength())
	}
	if st := setting(c, "fieldlengthhistogram"); st.Value != "hist.txt" || st.Source != SourceDefault {
		t.Errorf("setting %+v, want hist.txt (default)", st)
	}
	notes := strings.Join(c.Notes, "\n")
	for _, want := range []string{"fieldlengthhistogram hist.txt (" + filepath.Join(dir, "hist.txt") + ")",
		"5 buckets of 8 bytes; field lengths 8 to 32 bytes, mean 24.6", "fieldlength and minfieldlength do not apply"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}

	// Without the histogram distribution the file is never read.
	if err := os.Remove(filepath.Join(dir, "hist.txt")); err != nil {
		t.Fatal(err)
	}
	if c, err := resolveOne("fieldlengthdistribution", "uniform"); err != nil || c.Workload.FieldLengthHistogram != nil {
		t.Fatalf("uniform with no hist.txt: %v", err)
	}
}

// A relative path is from the working directory, as YCSB's FileReader
// takes it, even when a properties file elsewhere names it.
func TestFieldLengthHistogramPathIsFromTheWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	props := writeFile(t, dir, "conf/w.properties", "fieldlengthdistribution=histogram\nfieldlengthhistogram=h.txt\n")
	writeFile(t, dir, "conf/h.txt", "BlockSize\t1\n0\t1\n1\t1\n")
	p := NewProperties()
	if err := p.LoadFile(props); err != nil {
		t.Fatal(err)
	}
	_, err := Resolve(p, false)
	if !badinput.Is(err) || !strings.Contains(err.Error(), "fieldlengthhistogram=h.txt (from file "+props+"): cannot read it: no such file") ||
		!strings.Contains(err.Error(), "from the working directory") {
		t.Fatalf("h.txt beside the properties file but not in the working directory: %v", err)
	}
	writeFile(t, dir, "h.txt", "BlockSize\t4\n0\t1\n1\t1\n2\t1\n")
	c, err := Resolve(p, false)
	if err != nil || c.Workload.MaxFieldLength() != 8 {
		t.Fatalf("h.txt in the working directory: %v", err)
	}
}

func TestBadFieldLengthHistogram(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, text, want string }{
		{"missing", "", "fieldlengthhistogram=" + filepath.Join(dir, "missing") + " (from -p): cannot read it: no such file or directory"},
		{"dir", "", "is a directory"},
		{"empty", "", "the file is empty"},
		{"malformed", "BlockSize\t8\n0\t1\n1,2\n", "line 3 is not BUCKET<TAB>COUNT"},
		{"no-buckets", "BlockSize\t8\n", "the histogram is empty"},
		{"all-zero", "BlockSize\t8\n0\t0\n1\t0\n", "every bucket count is 0"},
		{"block-zero", "BlockSize\t0\n0\t1\n1\t1\n", "line 1: BlockSize \"0\" is not a whole number of bytes from 1"},
		{"block-negative", "BlockSize\t-8\n0\t1\n1\t1\n", "line 1: BlockSize \"-8\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			switch tt.name {
			case "missing":
			case "dir":
				if err := os.Mkdir(path, 0o755); err != nil {
					t.Fatal(err)
				}
			default:
				writeFile(t, dir, tt.name, tt.text)
			}
			p := NewProperties()
			p.Set("fieldlengthdistribution", "histogram", SourceP)
			p.Set("fieldlengthhistogram", path, SourceP)
			_, err := Resolve(p, false)
			if !badinput.Is(err) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line of bad input containing %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "fieldlengthhistogram=") {
				t.Fatalf("err = %v, want it to name the property", err)
			}
		})
	}
}

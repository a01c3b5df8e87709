package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/runner"
	"github.com/dbprobe/dbprobe/internal/workload"
	"github.com/dbprobe/dbprobe/workloads"
)

func setting(c *Config, key string) Setting {
	for _, s := range c.Settings {
		if s.Key == key {
			return s
		}
	}
	return Setting{}
}

func TestPrecedenceDefaultsFileDashPFlag(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.properties")
	os.WriteFile(file, []byte("recordcount=500\noperationcount=700\nthreadcount=3\n"), 0o644)
	p := NewProperties()
	if err := p.LoadBuiltin("a", ""); err != nil {
		t.Fatal(err)
	}
	if err := p.LoadFile(file); err != nil {
		t.Fatal(err)
	}
	if err := p.SetAssignment("operationcount=900"); err != nil {
		t.Fatal(err)
	}
	p.Set("threadcount", "8", "--threads")
	c, err := Resolve(p, true)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ key, value, source string }{
		{"readproportion", "0.5", "file workloads/workloada (built-in)"},
		{"recordcount", "500", "file " + file},
		{"operationcount", "900", "-p"},
		{"threadcount", "8", "--threads"},
		{"maxscanlength", "1000", "default"},
		{"insertcount", "500", "derived: recordcount - insertstart"},
		{"requestdistribution", "zipfian", "file workloads/workloada (built-in)"},
	}
	for _, tt := range tests {
		if got := setting(c, tt.key); got.Value != tt.value || got.Source != tt.source {
			t.Errorf("%s = %q from %q, want %q from %q", tt.key, got.Value, got.Source, tt.value, tt.source)
		}
	}
	if c.Threads != 8 || c.Workload.RecordCount != 500 || c.Workload.OperationCount != 900 {
		t.Errorf("typed config %+v", c)
	}
	if c.Workload.RequestDistribution != workload.Zipfian || c.Workload.Proportions[workload.Read] != 0.5 {
		t.Errorf("workload a not applied: %+v", c.Workload)
	}
}

func TestEveryKnownPropertyIsApplied(t *testing.T) {
	p := NewProperties()
	for _, kv := range []string{
		"recordcount=10", "operationcount=20", "maxexecutiontime=30", "threadcount=2", "target=100",
		"fieldcount=3", "fieldlength=50", "fieldlengthdistribution=uniform", "minfieldlength=5",
		"readallfields=false", "writeallfields=true", "readproportion=0.2", "updateproportion=0.2",
		"insertproportion=0.2", "scanproportion=0.2", "readmodifywriteproportion=0.2",
		"requestdistribution=hotspot", "hotspotdatafraction=0.1", "hotspotopnfraction=0.9",
		"exponential.percentile=90", "exponential.frac=0.5", "insertorder=ordered", "insertstart=2",
		"insertcount=5", "zeropadding=12", "minscanlength=2", "maxscanlength=7",
		"scanlengthdistribution=zipfian", "table=kv", "dataintegrity=false", "db.batchsize=64",
		"status.interval=2", "hdrhistogram.percentiles=90,99.99",
		"tabletype=memory", "durability=delayed", "durability.scope=transaction", "oppath=procedure",
		"bucketcount=1024", "retries=5", "retry.backoff=2ms", "retry.maxbackoff=1s", "op.timeout=750ms",
		"onerror=continue", "reconnect.timeout=5s",
	} {
		if err := p.SetAssignment(kv); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Resolve(p, true)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Workload
	if s.RecordCount != 10 || s.OperationCount != 20 || c.MaxExecutionTime.Seconds() != 30 || c.Threads != 2 || c.Target != 100 ||
		s.FieldCount != 3 || s.FieldLength != 50 || s.FieldLengthDistribution != workload.UniformLength || s.MinFieldLength != 5 ||
		s.ReadAllFields || !s.WriteAllFields || s.Proportions != [5]float64{0.2, 0.2, 0.2, 0.2, 0.2} ||
		s.RequestDistribution != workload.Hotspot || s.HotspotDataFraction != 0.1 || s.HotspotOpnFraction != 0.9 ||
		s.ExponentialPercentile != 90 || s.ExponentialFrac != 0.5 || s.InsertOrder != workload.Ordered || s.InsertStart != 2 ||
		s.InsertCount != 5 || s.ZeroPadding != 12 || s.MinScanLength != 2 || s.MaxScanLength != 7 ||
		s.ScanLengthDistribution != workload.ZipfianLength || s.Table != "kv" || c.BatchSize != 64 ||
		c.StatusInterval.Seconds() != 2 || len(c.Percentiles) != 2 || c.Percentiles[1] != 99.99 ||
		c.TableType != driver.TableMemory || c.Durability != driver.DurabilityDelayed ||
		c.DurabilityScope != driver.ScopeTransaction || c.OpPath != driver.PathProcedure || c.BucketCount != 1024 ||
		c.Retries != 5 || c.RetryBackoff != 2*time.Millisecond || c.RetryMaxBackoff != time.Second || c.OpTimeout != 750*time.Millisecond ||
		c.OnError != runner.OnErrorContinue || c.ReconnectTimeout != 5*time.Second {
		t.Fatalf("not every property applied: %+v %+v", c, s)
	}
	if len(c.Notes) != 0 {
		t.Fatalf("notes for known properties: %v", c.Notes)
	}
}

func TestDefaultKnobsChangeNothing(t *testing.T) {
	p := NewProperties()
	p.LoadBuiltin("a", "")
	p.SetAssignment("recordcount=1000")
	c, err := Resolve(p, true)
	if err != nil {
		t.Fatal(err)
	}
	if c.OnError != runner.OnErrorStop || c.ReconnectTimeout != time.Minute {
		t.Errorf("onerror %v, reconnect.timeout %v: want stop, 1m", c.OnError, c.ReconnectTimeout)
	}
	if c.TableType != driver.TableDisk || c.Durability != driver.DurabilityServer || c.OpPath != driver.PathStatement || c.Retries != 0 || c.OpTimeout != 0 {
		t.Errorf("defaults %v %v %v retries %d: want disk, server, statement, 0", c.TableType, c.Durability, c.OpPath, c.Retries)
	}
	if c.BucketCount != 1024 {
		t.Errorf("bucket count %d for 1000 records, want 1024", c.BucketCount)
	}
}

func TestUnknownAndInapplicableProperties(t *testing.T) {
	p := NewProperties()
	p.SetAssignment("recordcout=10")
	p.SetAssignment("measurementtype=timeseries")
	p.SetAssignment("db.passwd=hunter2")
	c, err := Resolve(p, false)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(c.Notes, "\n")
	for _, want := range []string{"unknown property recordcout=10", "measurementtype=timeseries", "db.passwd=xxxxx"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes %q lack %q", joined, want)
		}
	}
	if strings.Contains(joined, "hunter2") {
		t.Errorf("a password reached the notes: %q", joined)
	}
	_, err = Resolve(p, true)
	if !badinput.Is(err) || !strings.Contains(err.Error(), "recordcout") {
		t.Fatalf("strict: err = %v, want bad input naming recordcout", err)
	}
	if !strings.Contains(err.Error(), "did you mean recordcount?") || !strings.Contains(joined, "recordcout=10 (from -p) ignored; did you mean recordcount?") {
		t.Errorf("a typo of recordcount is not named: strict %q, notes %q", err, joined)
	}
}

// An unknown key gets the nearest property's name when it is a typo of
// one (two edits at most), and none when it is another tool's key.
func TestClosestProperty(t *testing.T) {
	for key, want := range map[string]string{
		"recrodcount":         "recordcount",
		"operationcnt":        "operationcount",
		"RequestDistribution": "requestdistribution",
		"threads":             "",
		"mongodb.url":         "",
		"measurementtype":     "",
	} {
		if got := closestProperty(key); got != want {
			t.Errorf("closestProperty(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestBadValuesAreBadInput(t *testing.T) {
	tests := []struct{ kv, want string }{
		{"recordcount=0", "recordcount=0"},
		{"recordcount=abc", "recordcount=abc"},
		{"threadcount=0", "threadcount=0"},
		{"readproportion=0.4", "sum to 1"},
		{"readproportion=1.5", "readproportion=1.5"},
		{"requestdistribution=pareto", "requestdistribution=pareto"},
		{"insertorder=random", "insertorder=random"},
		{"table=users;drop", "table="},
		{"fieldlength=0", "fieldlength=0"},
		{"maxscanlength=0", "scan lengths"},
		{"target=-5", "target=-5"},
		{"readallfields=yes", "readallfields=yes"},
		{"workload=site.ycsb.workloads.TimeSeriesWorkload", "not supported"},
		{"hdrhistogram.percentiles=50,x", "hdrhistogram.percentiles"},
		{"tabletype=ssd", "disk, memory, nondurable"},
		{"durability=lazy", "server, full, delayed"},
		{"oppath=rpc", "statement, procedure"},
		{"retries=-1", "retries=-1"},
		{"retry.backoff=5", "retry.backoff=5"},
		{"retry.maxbackoff=0s", "retry.maxbackoff=0s"},
		{"bucketcount=0", "bucketcount=0"},
		{"op.timeout=-1s", "op.timeout=-1s"},
		{"op.timeout=fast", "op.timeout=fast"},
		{"onerror=ignore", `onerror="ignore" is not a choice: give stop`},
		{"reconnect.timeout=soon", "reconnect.timeout=soon"},
		{"reconnect.timeout=-1s", "reconnect.timeout=-1s must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.kv, func(t *testing.T) {
			p := NewProperties()
			p.LoadBuiltin("a", "")
			p.SetAssignment(tt.kv)
			_, err := Resolve(p, false)
			if !badinput.Is(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want bad input containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("message spans lines: %q", err)
			}
		})
	}
}

func TestFiles(t *testing.T) {
	p := NewProperties()
	if err := p.LoadFile("workloads/workloadc"); err != nil {
		t.Fatalf("built-in by path: %v", err)
	}
	if v, src, _ := p.Get("readproportion"); v != "1" || !strings.Contains(src, "built-in") {
		t.Fatalf("readproportion %q from %q", v, src)
	}
	err := p.LoadFile(filepath.Join(t.TempDir(), "missing.properties"))
	if !badinput.Is(err) || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing file: %v", err)
	}
	if err := p.LoadBuiltin("z", ""); !badinput.Is(err) {
		t.Fatalf("unknown workload: %v", err)
	}
	if err := p.SetAssignment("novalue"); !badinput.Is(err) {
		t.Fatalf("-p without =: %v", err)
	}
	dir := t.TempDir()
	if err := p.LoadFile(dir); !badinput.Is(err) {
		t.Fatalf("a directory as a properties file: %v", err)
	}
}

// db.batchsize of 0 or less runs batches of one, as in YCSB, and the
// header shows the 1 in force.
func TestBatchSizeBelowOneIsOne(t *testing.T) {
	p := NewProperties()
	p.Set("db.batchsize", "0", SourceP)
	c, err := Resolve(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if st := setting(c, "db.batchsize"); c.BatchSize != 1 || st.Value != "1" || !strings.Contains(st.Source, "no batching") {
		t.Errorf("BatchSize %d, setting %+v; want 1, shown as 1 with why", c.BatchSize, st)
	}
}

// A file named like a built-in workload is the file, not the built-in: a
// user's own workloadc must not run YCSB's.
func TestWorkloadFileNamedLikeABuiltin(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "workloadc")
	if err := os.WriteFile(path, []byte("readproportion=0\nupdateproportion=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := NewProperties()
	if err := p.LoadBuiltin(path, ""); err != nil {
		t.Fatal(err)
	}
	if v, src, _ := p.Get("updateproportion"); v != "1" || src != "file "+path {
		t.Errorf("updateproportion = %q from %q, want 1 from the file %s", v, src, path)
	}
	p = NewProperties()
	if err := p.LoadBuiltin("c", ""); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := p.Get("readproportion"); v != "1" {
		t.Errorf("--workload c: readproportion = %q, want the built-in's 1", v)
	}
}

func FuzzProperties(f *testing.F) {
	f.Add("recordcount=10\nreadproportion=1\nupdateproportion=0\n")
	f.Add("a\\\nb=c\n# x\n!y\n")
	f.Fuzz(func(t *testing.T, text string) {
		p := NewProperties()
		if err := p.loadText([]byte(text), "fuzz", "fuzz", false); err != nil {
			if !badinput.Is(err) {
				t.Fatalf("parse error is not bad input: %v", err)
			}
			return
		}
		if _, err := Resolve(p, false); err != nil && !badinput.Is(err) {
			t.Fatalf("resolve error is not bad input: %v", err)
		}
	})
}

// A duration outlasts an operation count that only a built-in workload or
// the default set (every built-in file says 1000, done in milliseconds);
// a count the user chose stands beside it.
func TestDurationOutlastsACountTheUserDidNotSet(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine.properties")
	os.WriteFile(mine, []byte("operationcount=700\n"), 0o644)
	timed := filepath.Join(dir, "timed.properties")
	os.WriteFile(timed, []byte("maxexecutiontime=30\n"), 0o644)
	tests := []struct {
		name   string
		setup  func(p *Properties) error
		count  int64
		source string
	}{
		{"built-in workload by default", func(p *Properties) error {
			if err := p.LoadBuiltin("a", "workloads/workloada, by default"); err != nil {
				return err
			}
			p.Set("maxexecutiontime", "5s", "--duration")
			return nil
		}, 0, "workloads/workloada, by default; its 1000 gives way to maxexecutiontime=5s (--duration): the run is bounded by time"},
		{"built-in workload named", func(p *Properties) error {
			if err := p.LoadFile("workloads/workloadb"); err != nil {
				return err
			}
			return p.SetAssignment("maxexecutiontime=5")
		}, 0, "file workloads/workloadb (built-in); its 1000 gives way to maxexecutiontime=5s (-p): the run is bounded by time"},
		{"the default count, time from the user's file", func(p *Properties) error {
			return p.LoadFile(timed)
		}, 0, "default; its 1000 gives way to maxexecutiontime=30s (file " + timed + "): the run is bounded by time"},
		{"-p count stands", func(p *Properties) error {
			p.LoadBuiltin("a", "")
			p.Set("maxexecutiontime", "5s", "--duration")
			return p.SetAssignment("operationcount=900")
		}, 900, "-p"},
		{"--operations stands", func(p *Properties) error {
			p.Set("maxexecutiontime", "5s", "--duration")
			p.Set("operationcount", "800", "--operations")
			return nil
		}, 800, "--operations"},
		{"the user's file stands", func(p *Properties) error {
			p.LoadBuiltin("a", "")
			if err := p.LoadFile(mine); err != nil {
				return err
			}
			p.Set("maxexecutiontime", "5s", "--duration")
			return nil
		}, 700, "file " + mine},
		{"an unchanged copy of a built-in file on disk gives way", func(p *Properties) error {
			text, _, _ := workloads.Lookup("a")
			copied := filepath.Join(dir, "workloada")
			os.WriteFile(copied, []byte("# my copy\n"+text), 0o644)
			if err := p.LoadFile(copied); err != nil {
				return err
			}
			p.Set("maxexecutiontime", "5s", "--duration")
			return nil
		}, 0, "file " + filepath.Join(dir, "workloada") + " (the same as the built-in workloads/workloada); its 1000 gives way to maxexecutiontime=5s (--duration): the run is bounded by time"},
		{"a changed copy is the user's", func(p *Properties) error {
			text, _, _ := workloads.Lookup("a")
			changed := filepath.Join(dir, "workloada2")
			os.WriteFile(changed, []byte(strings.Replace(text, "operationcount=1000", "operationcount=1001", 1)), 0o644)
			if err := p.LoadFile(changed); err != nil {
				return err
			}
			p.Set("maxexecutiontime", "5s", "--duration")
			return nil
		}, 1001, "file " + filepath.Join(dir, "workloada2")},
		{"no duration: the built-in count stands", func(p *Properties) error {
			return p.LoadBuiltin("a", "")
		}, 1000, "file workloads/workloada (built-in)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewProperties()
			if err := tt.setup(p); err != nil {
				t.Fatal(err)
			}
			c, err := Resolve(p, false)
			if err != nil {
				t.Fatal(err)
			}
			got := setting(c, "operationcount")
			if c.Workload.OperationCount != tt.count || got.Value != strconv.FormatInt(tt.count, 10) || got.Source != tt.source {
				t.Errorf("operationcount %d, shown %q from %q; want %d from %q", c.Workload.OperationCount, got.Value, got.Source, tt.count, tt.source)
			}
		})
	}
}

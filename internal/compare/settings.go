package compare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/result"
)

// Difference is a setting whose values differ between the sides.
type Difference struct {
	// Setting names it as the result's header does ("durability"),
	// database settings prefixed "database " ("database synchronous").
	Setting string `json:"setting"`
	// A and B are the values each side ran with, each once, in the
	// order first met.
	A []string `json:"a"`
	B []string `json:"b"`
}

// workloadKeys are the YCSB settings that make the workload: the
// operation mix and how keys are chosen. Results that differ in one are
// measuring different work, which compare refuses without --force;
// threads, durability, table type or record count are what a comparison
// is for, and are listed as differences instead.
var workloadKeys = []string{
	"workload", "readproportion", "updateproportion", "insertproportion",
	"scanproportion", "readmodifywriteproportion", "requestdistribution", "mix",
}

// runKeys are settings that name the run, not what it measured: each run
// has its own (a file to write, a seed drawn from the clock), so they are
// never listed as differences.
var runKeys = map[string]bool{
	"out": true, "hlog": true, "influx-out": true, "metrics-addr": true, "metrics-linger": true,
	"quiet": true, "status": true, "seed": true, "keep-db": true, "password-file": true, "metrics-allow-remote": true,
}

// sameWork refuses runs of different experiments or workloads, unless
// force, in which case it notes what differs.
func sameWork(runs []run, force bool, notes *[]string) error {
	first := runs[0]
	for _, r := range runs[1:] {
		if r.phase.Header.Experiment != first.phase.Header.Experiment {
			// Forced past sameExperiment: the workloads of different
			// experiments are not comparable settings.
			return nil
		}
	}
	for _, key := range workloadKeys {
		v0, _ := setting(first.phase.Header, key)
		for _, r := range runs[1:] {
			if v, _ := setting(r.phase.Header, key); v != v0 {
				msg := fmt.Sprintf("the workload differs: %s is %s in %s and %s in %s", key, shown(v0), first.path, shown(v), r.path)
				if !force {
					return badinput.New("%s; compare refuses different workloads (--force compares them anyway)", msg)
				}
				*notes = append(*notes, "forced: "+msg)
				return nil
			}
		}
	}
	w0 := work(first.phase)
	for _, r := range runs[1:] {
		if w := work(r.phase); w != w0 {
			msg := fmt.Sprintf("the workload differs: %s ran %s and %s ran %s", first.path, w0, r.path, w)
			if !force {
				return badinput.New("%s; compare refuses different workloads (--force compares them anyway)", msg)
			}
			*notes = append(*notes, "forced: "+msg)
			return nil
		}
	}
	return nil
}

// work names what a stress or storage phase ran, beyond its settings:
// the statements of a stress script, a storage experiment's kind.
func work(p result.Phase) string {
	s := p.Summary
	switch {
	case s == nil:
		return ""
	case s.Stress != nil:
		texts := make([]string, len(s.Stress.Statements))
		for i, st := range s.Stress.Statements {
			texts[i] = st.Text
		}
		sum := strings.Join(texts, "; ")
		if len(sum) > 60 {
			sum = sum[:57] + "…"
		}
		return result.Plural(len(texts), "statement") + " " + strconv.Quote(sum)
	case s.Storage != nil:
		return "storage " + s.Storage.Experiment
	}
	return ""
}

// shown is a setting's value in a message: "unset" when absent.
func shown(v string) string {
	if v == "" {
		return "unset"
	}
	return v
}

func setting(h result.Header, key string) (string, bool) {
	for _, s := range h.Settings {
		if s.Key == key {
			return s.Value, true
		}
	}
	return "", false
}

// facts are the settings of a run that a comparison lists when they
// differ: the header's settings, the database's, the target and the
// client machine, every value redacted as a result shows it.
func facts(r run) map[string]string {
	h := r.phase.Header
	f := map[string]string{}
	put := func(k, v string) {
		if v != "" {
			f[k] = redact(k, v)
		}
	}
	for _, s := range h.Settings {
		if !runKeys[s.Key] {
			put(s.Key, s.Value)
		}
	}
	put("target", h.Target)
	put("database", h.Database.Driver)
	put("database version", h.Database.ServerVersion)
	put("database library", h.Database.Library)
	for _, s := range h.Database.Settings {
		if s.Key == "database" {
			put("database file", s.Value) // SQLite's: "database database" reads as a stutter
			continue
		}
		put("database "+s.Key, s.Value)
	}
	e := h.Environment
	put("dbprobe version", e.Dbprobe)
	put("client host", e.Hostname)
	if e.CPUs > 0 {
		put("client cpus", strconv.Itoa(e.CPUs))
	}
	if e.GOMAXPROCS > 0 {
		put("client gomaxprocs", strconv.Itoa(e.GOMAXPROCS))
	}
	put("client os", e.OS+"/"+e.Arch)
	return f
}

// redact hides a secret setting's value and a password in a URL: the
// writer redacts them already, and a result written by hand or by
// another tool is shown no less carefully.
func redact(key, value string) string {
	if driver.SecretKey(key) {
		return "xxxxx"
	}
	if strings.Contains(value, ":") && (strings.Contains(value, "@") || strings.Contains(strings.ToLower(value), "passw")) {
		return driver.RedactURL(value)
	}
	return value
}

// differences lists the settings whose values differ between the sides.
// A setting that varies from run to run on both sides (a temporary
// database's path) tells the sides apart no more than it tells runs
// apart: it is noted, not listed.
func differences(a, b []run, notes *[]string) []Difference {
	type vals struct{ a, b []string }
	all := map[string]*vals{}
	add := func(rs []run, onA bool) {
		for _, r := range rs {
			for k, v := range facts(r) {
				x := all[k]
				if x == nil {
					x = &vals{}
					all[k] = x
				}
				if onA && !slices.Contains(x.a, v) {
					x.a = append(x.a, v)
				}
				if !onA && !slices.Contains(x.b, v) {
					x.b = append(x.b, v)
				}
			}
		}
	}
	add(a, true)
	add(b, false)
	// A setting absent from every run of a side is "unset" there.
	for _, x := range all {
		if len(x.a) == 0 {
			x.a = []string{"unset"}
		}
		if len(x.b) == 0 {
			x.b = []string{"unset"}
		}
	}
	var out []Difference
	var noisy []string
	for _, k := range sortedKeys(all) {
		x := all[k]
		if sameSet(x.a, x.b) {
			continue
		}
		if len(x.a) > 1 && len(x.b) > 1 {
			noisy = append(noisy, k)
			continue
		}
		out = append(out, Difference{Setting: k, A: x.a, B: x.b})
	}
	if len(noisy) > 0 {
		*notes = append(*notes, fmt.Sprintf("not listed as differences: %s, which differ from run to run on both sides", strings.Join(noisy, ", ")))
	}
	// The header's settings first, in the order a result lists them,
	// then the database's and the client's.
	rank := func(k string) int {
		switch {
		case strings.HasPrefix(k, "database"):
			return 2
		case strings.HasPrefix(k, "client") || k == "dbprobe version":
			return 3
		case k == "target":
			return 1
		}
		return 0
	}
	slices.SortStableFunc(out, func(x, y Difference) int { return rank(x.Setting) - rank(y.Setting) })
	return out
}

func sameSet(x, y []string) bool {
	if len(x) != len(y) {
		return false
	}
	for _, v := range x {
		if !slices.Contains(y, v) {
			return false
		}
	}
	return true
}

package config

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"sort"
	"strings"

	"github.com/magiconair/properties"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/workloads"
)

// Source kinds, as printed in the header.
const (
	SourceDefault = "default"
	SourceP       = "-p"
)

// Properties is a bag of YCSB properties, each with where it came from.
// Later sets override earlier ones.
type Properties struct {
	values map[string]entry
}

type entry struct {
	value  string
	source string
	// builtin marks a value from one of dbprobe's copies of YCSB's
	// workload files, which the user did not write.
	builtin bool
}

// NewProperties returns an empty bag.
func NewProperties() *Properties { return &Properties{values: map[string]entry{}} }

// Set sets key to value, remembering source ("file x", "-p", "--threads").
func (p *Properties) Set(key, value, source string) {
	p.values[strings.TrimSpace(key)] = entry{value: strings.TrimSpace(value), source: source}
}

// UserSet reports whether the user chose key's value: by -p, a flag or a
// properties file of their own, not by a built-in workload or a default.
func (p *Properties) UserSet(key string) bool {
	e, ok := p.values[key]
	return ok && !e.builtin
}

// Get returns a value, where it came from, and whether it is set.
func (p *Properties) Get(key string) (value, source string, ok bool) {
	e, ok := p.values[key]
	return e.value, e.source, ok
}

// Keys returns every key set, sorted.
func (p *Properties) Keys() []string {
	keys := make([]string, 0, len(p.values))
	for k := range p.values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// LoadFile reads a YCSB properties file. A name that is not a file on disk
// but names a built-in workload ("workloads/workloada", "workloada", "a")
// loads dbprobe's own copy, and the source says so.
func (p *Properties) LoadFile(name string) error {
	data, err := os.ReadFile(name)
	source := "file " + name
	if err != nil {
		text, canonical, ok := workloads.Lookup(name)
		if !ok || !os.IsNotExist(err) {
			return badinput.New("cannot read properties file %s: %s; give a readable file or a built-in workload (%s)", name, shortIOError(err), builtinList())
		}
		return p.loadText([]byte(text), "file "+canonical+" (built-in)", name, true)
	}
	if canonical, ok := builtinTwin(data); ok {
		// The copy of YCSB's file in dbprobe's own tree, or one the user
		// keeps unchanged: its values are YCSB's, not the user's.
		return p.loadText(data, source+" (the same as the built-in "+canonical+")", name, true)
	}
	return p.loadText(data, source, name, false)
}

// LoadBuiltin loads a built-in workload by letter, as --workload does. A
// name longer than a letter that is a file on disk is that file, even when
// it is called like a built-in one (./workloadc, my/workloadb).
func (p *Properties) LoadBuiltin(letter, source string) error {
	if len(letter) > 1 {
		if st, err := os.Stat(letter); err == nil && !st.IsDir() {
			return p.LoadFile(letter)
		}
	}
	text, canonical, ok := workloads.Lookup(letter)
	if !ok {
		if _, err := os.Stat(letter); err == nil {
			return p.LoadFile(letter)
		}
		return badinput.New("unknown workload %q; use one of %s, or a properties file path", letter, builtinList())
	}
	if source == "" {
		source = "file " + canonical + " (built-in)"
	}
	return p.loadText([]byte(text), source, canonical, true)
}

// builtinTwin reports the built-in workload whose properties the file
// sets, each to the same value and no others, whatever its comments.
func builtinTwin(data []byte) (string, bool) {
	mine, err := parseText(data)
	if err != nil {
		return "", false
	}
	for _, letter := range workloads.Names {
		text, canonical, _ := workloads.Lookup(letter)
		if theirs, err := parseText([]byte(text)); err == nil && maps.Equal(mine, theirs) {
			return canonical, true
		}
	}
	return "", false
}

// parseText reads properties text into a map, as loadText reads it.
func parseText(data []byte) (map[string]string, error) {
	l := &properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	props, err := l.LoadBytes(bytes.Clone(data))
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, k := range props.Keys() {
		v, _ := props.Get(k)
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m, nil
}

func (p *Properties) loadText(data []byte, source, name string, builtin bool) error {
	l := &properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	props, err := l.LoadBytes(bytes.Clone(data))
	if err != nil {
		return badinput.New("cannot parse properties file %s: %v", name, err)
	}
	for _, k := range props.Keys() {
		v, _ := props.Get(k)
		p.Set(k, v, source)
		e := p.values[strings.TrimSpace(k)]
		e.builtin = builtin
		p.values[strings.TrimSpace(k)] = e
	}
	return nil
}

// SetAssignment applies one -p key=value.
func (p *Properties) SetAssignment(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return badinput.New("-p %q is not key=value; write it as -p recordcount=100000", kv)
	}
	p.Set(k, v, SourceP)
	return nil
}

func builtinList() string {
	names := make([]string, len(workloads.Names))
	for i, n := range workloads.Names {
		names[i] = n
	}
	return "workloads " + strings.Join(names, ", ")
}

// shortIOError drops the path an os error repeats.
func shortIOError(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return fmt.Sprint(err)
}

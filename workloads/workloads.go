// Package workloads ships dbprobe's copies of the YCSB core workload files
// a–f, so that `--workload a` and `-P workloads/workloada` work from any
// directory, and the files themselves can be read, copied and edited.
package workloads

import (
	"embed"
	"fmt"
	"path"
	"strings"
)

//go:embed workloada workloadb workloadc workloadd workloade workloadf
var files embed.FS

// Names lists the built-in workloads by letter.
var Names = []string{"a", "b", "c", "d", "e", "f"}

// Lookup returns the text of a built-in workload named by letter ("a"),
// file name ("workloada") or path ending in one ("workloads/workloada").
func Lookup(name string) (text string, canonical string, ok bool) {
	base := strings.ToLower(path.Base(strings.ReplaceAll(name, "\\", "/")))
	base = strings.TrimPrefix(base, "workload")
	if len(base) != 1 {
		return "", "", false
	}
	file := "workload" + base
	b, err := files.ReadFile(file)
	if err != nil {
		return "", "", false
	}
	return string(b), "workloads/" + file, true
}

// MustText returns a built-in workload's text; it panics for an unknown
// letter, which is a programming error.
func MustText(letter string) string {
	text, _, ok := Lookup(letter)
	if !ok {
		panic(fmt.Sprintf("workloads: no built-in workload %q", letter))
	}
	return text
}

// Package docs holds dbprobe's documentation. Its tests keep the command
// reference in docs/reference what the commands say (it is generated from
// them with cobra's own generator, which stays out of the dbprobe binary by
// living here, in a test).
package docs

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/dbprobe/dbprobe/internal/cli"
)

var update = flag.Bool("update", false, "regenerate docs/reference from the commands")

// regenerate is the command that rewrites the reference, as the failure
// message and docs/README.md give it.
const regenerate = "go test ./docs -run TestReference -update"

// generatedNote heads every generated page, so that nobody edits one by hand.
const generatedNote = "<!-- Generated from dbprobe's commands by `" + regenerate + "`; edit the commands' help in internal/cli, not this file. -->\n\n"

// generate writes the Markdown reference of every dbprobe command into dir.
func generate(t *testing.T, dir string) {
	t.Helper()
	root := cli.NewRoot()
	// Without this, every page ends with the day it was generated, and
	// the comparison below would fail each morning.
	var stable func(*cobra.Command)
	stable = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		for _, sub := range c.Commands() {
			stable(sub)
		}
	}
	stable(root)
	prepend := func(string) string { return generatedNote }
	link := func(name string) string { return name }
	if err := doc.GenMarkdownTreeCustom(root, dir, prepend, link); err != nil {
		t.Fatal(err)
	}
}

// TestReference checks that docs/reference is exactly what the commands
// generate now: a flag, a default or a help text changed in internal/cli
// without regenerating fails here.
func TestReference(t *testing.T) {
	const committed = "reference"
	if *update {
		if err := os.RemoveAll(committed); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(committed, 0o755); err != nil {
			t.Fatal(err)
		}
		generate(t, committed)
		return
	}
	fresh := t.TempDir()
	generate(t, fresh)
	want := readDir(t, fresh)
	got := readDir(t, committed)
	var stale []string
	for name, w := range want {
		if g, ok := got[name]; !ok || !bytes.Equal(g, w) {
			stale = append(stale, "docs/reference/"+name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			stale = append(stale, "docs/reference/"+name+" (no such command now)")
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Fatalf("%s not what the commands generate: run %s", strings.Join(stale, ", "), regenerate)
	}
}

// TestGeneratorNotInBinary keeps cobra's doc generator, and the Markdown and
// man page libraries it pulls in, out of the dbprobe binary: each package
// more is compile time on a newcomer's first go run.
func TestGeneratorNotInBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/dbprobe/dbprobe/cmd/dbprobe").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, bad := range []string{"github.com/spf13/cobra/doc", "github.com/cpuguy83/go-md2man", "github.com/russross/blackfriday"} {
			if strings.HasPrefix(pkg, bad) {
				t.Errorf("cmd/dbprobe depends on %s: the reference generator belongs in docs/docs_test.go only", pkg)
			}
		}
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// link is an inline Markdown link: [text](target). Targets here never hold
// spaces or parentheses.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinks checks every relative link of README.md and of the pages under
// docs/: the file it names exists, and so does the heading its #anchor
// names. Text moved from one page to another must not leave a link behind
// that leads nowhere.
func TestLinks(t *testing.T) {
	pages := []string{"../README.md"}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllSubmatch(stripCode(text), -1) {
			target := string(m[1])
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			checked++
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %s: no such file %s", shown(page), target, shown(path))
				continue
			}
			if anchor == "" {
				continue
			}
			if anchors[path] == nil {
				anchors[path] = headings(t, path)
			}
			if !anchors[path][anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", shown(page), target, shown(path), anchor)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d relative links found in %d pages: the link pattern no longer matches", checked, len(pages))
	}
}

// fence is a fenced code block, whose brackets are not links.
var fence = regexp.MustCompile("(?ms)^```.*?^```")

// span is an inline code span.
var span = regexp.MustCompile("`[^`\n]*`")

// stripCode drops fenced code blocks and inline code spans.
func stripCode(b []byte) []byte {
	return span.ReplaceAll(fence.ReplaceAll(b, nil), nil)
}

// headings returns the anchors GitHub gives the headings of a Markdown
// file: lower case, spaces as hyphens, other punctuation dropped, and a
// repeated heading numbered -1, -2….
func headings(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(string(fence.ReplaceAll(b, nil)), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var id strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				id.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				id.WriteRune(r)
			}
		}
		s := id.String()
		if n := seen[s]; n > 0 {
			ids[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			ids[s] = true
		}
		seen[s]++
	}
	return ids
}

// shown is a path from the test's directory (docs) as from the repository's
// root, as a reader looks for it.
func shown(path string) string {
	if rel, ok := strings.CutPrefix(filepath.ToSlash(path), "../"); ok {
		return rel
	}
	return "docs/" + filepath.ToSlash(path)
}

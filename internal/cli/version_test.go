package cli

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	const commit = "a52cc31d7e4f0123456789abcdef0123456789ab"
	found := func() (checkout, bool) { return checkout{commit: "0123456789abcdef"}, true }
	foundDirty := func() (checkout, bool) { return checkout{commit: "0123456789abcdef", dirty: true}, true }
	none := func() (checkout, bool) { return checkout{}, false }
	devel := func(settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/dbprobe/dbprobe", Version: "(devel)"}, Settings: settings}
	}
	tests := []struct {
		name string
		info *debug.BuildInfo
		look func() (checkout, bool)
		want string
	}{
		{"go install @v0.2.0", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, found, "v0.2.0"},
		{"go install of a commit between tags", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.1-0.20261125194000-a52cc31d7e4f"}}, found, "v0.2.1-0.20261125194000-a52cc31d7e4f"},
		{"checkout stamped by Go", devel(debug.BuildSetting{Key: "vcs.revision", Value: commit}, debug.BuildSetting{Key: "vcs.modified", Value: "false"}), found, "0.1.0-dev+a52cc31d7e4f"},
		{"checkout stamped by Go, modified", devel(debug.BuildSetting{Key: "vcs.revision", Value: commit}, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), none, "0.1.0-dev+a52cc31d7e4f.dirty"},
		{"-buildvcs=false: the checkout read at run time", devel(), found, "0.1.0-dev+0123456789ab"},
		{"-buildvcs=false, tracked files changed", devel(), foundDirty, "0.1.0-dev+0123456789ab.dirty"},
		{"-trimpath or no git: the base version", devel(), none, "0.1.0-dev"},
		{"no build information", nil, none, "0.1.0-dev"},
		{"no build information, a checkout", nil, found, "0.1.0-dev+0123456789ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf("0.1.0-dev", tt.info, tt.look); got != tt.want {
				t.Errorf("versionOf = %q, want %q", got, tt.want)
			}
		})
	}
}

// sourceCheckout reads this repository's HEAD when the build kept absolute
// source paths, and nothing under -trimpath.
func TestSourceCheckout(t *testing.T) {
	c, ok := sourceCheckout()
	_, file, _, _ := runtime.Caller(0)
	if !filepath.IsAbs(file) {
		if ok {
			t.Fatalf("built with -trimpath (source path %q), yet a checkout was read: %+v", file, c)
		}
		return
	}
	out, err := exec.Command("git", "-C", filepath.Dir(file), "rev-parse", "HEAD").Output()
	if err != nil {
		if ok {
			t.Fatalf("git rev-parse fails here (%v), yet a checkout was read: %+v", err, c)
		}
		t.Skipf("no git checkout to read here: %v", err)
	}
	if !ok || c.commit != strings.TrimSpace(string(out)) {
		t.Fatalf("sourceCheckout = %+v, %v; want commit %s", c, ok, out)
	}
}

// --version, dbprobe version and a run's header name the same version.
func TestVersionEverywhere(t *testing.T) {
	line := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := Execute(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String()
	}
	flag, cmd := line("--version"), line("version")
	want := "dbprobe " + resolveVersion() + " (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	if flag != want || cmd != want {
		t.Fatalf("--version printed %q, version %q; want %q", flag, cmd, want)
	}
	if !regexp.MustCompile(`^dbprobe (v\d+\.\d+\.\d+\S*|\d+\.\d+\.\d+-dev(\+[0-9a-f]{12}(\.dirty)?)?) \(`).MatchString(flag) {
		t.Errorf("--version printed %q: not a module version nor base+commit", flag)
	}
	out := line("run", "--db", "null", "-p", "operationcount=10", "-p", "recordcount=10")
	header := "# dbprobe " + resolveVersion() + " ("
	if !strings.Contains(out, "\n"+header) && !strings.HasPrefix(out, header) {
		t.Errorf("the header does not start with %q:\n%s", header, out)
	}
}

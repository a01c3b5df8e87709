package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/experiment"
)

// checkout is what git says of the source tree this binary was compiled
// from: HEAD's commit and whether tracked files differ from it.
type checkout struct {
	commit string
	dirty  bool
}

// versionOf returns dbprobe's version as a build knows it, from the most
// to the least exact source:
//
//   - the module version go install recorded (go install
//     github.com/dbprobe/dbprobe/cmd/dbprobe@v0.2.0 gives "v0.2.0"; a commit
//     between tags gives Go's pseudo-version, which names the commit);
//   - the commit Go stamped into a build from a checkout (vcs.revision,
//     present unless -buildvcs=false), as base+commit, with ".dirty" when
//     tracked files had changes;
//   - the commit of the checkout the source files were compiled from, read
//     with git at run time (look; nil when the build used -trimpath or git
//     is not there), in the same form;
//   - base alone.
func versionOf(base string, info *debug.BuildInfo, look func() (checkout, bool)) string {
	if info != nil {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		var c checkout
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				c.commit = s.Value
			case "vcs.modified":
				c.dirty = s.Value == "true"
			}
		}
		if c.commit != "" {
			return withCommit(base, c)
		}
	}
	if look != nil {
		if c, ok := look(); ok {
			return withCommit(base, c)
		}
	}
	return base
}

// withCommit appends the commit as semver build metadata: 0.1.0-dev+a52cc31d7e4f.
func withCommit(base string, c checkout) string {
	v := base + "+" + c.commit[:min(12, len(c.commit))]
	if c.dirty {
		v += ".dirty"
	}
	return v
}

// sourceCheckout asks git about the checkout that holds this file's source.
// runtime.Caller reports the path the compiler saw: absolute in a plain
// build (go run, go build, go test), module-relative under -trimpath,
// where there is nothing to ask. It reads the checkout as it is when
// dbprobe starts; a commit or an edit dated after the executable was
// written cannot be in it, and then no commit is named (a checkout of an
// older commit after the build is not seen: its date is older too).
func sourceCheckout() (checkout, bool) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return checkout{}, false
	}
	dir := filepath.Dir(file)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	git := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
		return strings.TrimSpace(string(out)), err
	}
	// The file must be tracked where git looks: a source tree unpacked
	// inside some other repository is not that repository's commit.
	if _, err := git("ls-files", "--error-unmatch", "--", filepath.Base(file)); err != nil {
		return checkout{}, false
	}
	commit, err := git("rev-parse", "--verify", "HEAD")
	if err != nil || commit == "" {
		return checkout{}, false
	}
	// Untracked files are left out, as Go's own vcs.modified leaves them.
	status, err := git("status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return checkout{}, false
	}
	// The tree is read now, not when the binary was built: a commit made
	// or a file changed after the executable was written is not in it, and
	// then no commit is named rather than a wrong one.
	built, ok := executableTime()
	if !ok {
		return checkout{}, false
	}
	committed, err := git("show", "-s", "--format=%ct", "HEAD")
	if sec, perr := strconv.ParseInt(committed, 10, 64); err != nil || perr != nil || time.Unix(sec, 0).After(built) {
		return checkout{}, false
	}
	if status != "" {
		top, err := git("rev-parse", "--show-toplevel")
		if err != nil {
			return checkout{}, false
		}
		for _, line := range strings.Split(status, "\n") {
			if len(line) < 4 {
				continue
			}
			name := line[3:]
			if _, after, found := strings.Cut(name, " -> "); found {
				name = after // a rename: the new name is what was built
			}
			if st, err := os.Stat(filepath.Join(top, name)); err == nil && st.ModTime().After(built) {
				return checkout{}, false
			}
		}
	}
	return checkout{commit: commit, dirty: status != ""}, true
}

// executableTime is when the running executable was written: the latest
// moment the source it was built from can date from.
func executableTime() (time.Time, bool) {
	exe, err := os.Executable()
	if err != nil {
		return time.Time{}, false
	}
	st, err := os.Stat(exe)
	if err != nil {
		return time.Time{}, false
	}
	return st.ModTime(), true
}

// resolveVersion works the version out once per process and makes it the
// one every header and result prints, so that --version and the header
// cannot disagree.
var resolveVersion = sync.OnceValue(func() string {
	info, _ := debug.ReadBuildInfo()
	v := versionOf(experiment.Version, info, sourceCheckout)
	experiment.Version = v
	return v
})

// versionLine is what --version and dbprobe version print: the version
// with the Go release and platform, as a header's first line has them.
func versionLine() string {
	return fmt.Sprintf("dbprobe %s (%s, %s/%s)\n", resolveVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print dbprobe's version (the module version, or the commit of a checkout)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), versionLine())
			return err
		},
	}
}

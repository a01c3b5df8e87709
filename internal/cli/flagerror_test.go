package cli

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestDescribeFlagError(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"--threads=one", `--threads "one": not a whole number`},
		{"--threads=99999999999999999999", `--threads "99999999999999999999": out of range`},
		{"--target=fast", `--target "fast": not a number`},
		{"--keep=perhaps", `--keep "perhaps": not true or false`},
		{"--duration=10", `--duration "10": not a duration (for example 500ms, 30s, 5m)`},
	} {
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		fs.Int("threads", 1, "")
		fs.Float64("target", 0, "")
		fs.Bool("keep", false, "")
		fs.Duration("duration", time.Second, "")
		err := fs.Parse([]string{c.args})
		if err == nil {
			t.Fatalf("%s: parsed", c.args)
		}
		if got := describeFlagError(err).Error(); got != c.want {
			t.Errorf("%s: %q, want %q", c.args, got, c.want)
		}
	}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	err := fs.Parse([]string{"--nope"})
	if got := describeFlagError(err); got != err {
		t.Errorf("an unknown flag's error changed: %v", got)
	}
}

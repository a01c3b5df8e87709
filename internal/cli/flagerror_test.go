package cli

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// Each kind of value pflag refuses is named in words, one case for every
// strconv function and for durations; a refusal of another kind, and any
// error that is not about a value, passes through unchanged.
func TestDescribeFlagError(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"--threads=one", `--threads "one": not a whole number`},
		{"--count=-1", `--count "-1": not a whole number`},
		{"--sizes=1,two", `--sizes "1,two": not a whole number`},
		{"--threads=99999999999999999999", `--threads "99999999999999999999": out of range`},
		{"--target=1e999", `--target "1e999": out of range`},
		{"--target=fast", `--target "fast": not a number`},
		{"--keep=perhaps", `--keep "perhaps": not true or false`},
		{"--duration=10", `--duration "10": not a duration (for example 500ms, 30s, 5m)`},
		{"--addr=nowhere", ""},
		{"--nope", ""},
	} {
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		fs.Int("threads", 1, "")
		fs.Uint("count", 1, "")
		fs.IntSlice("sizes", nil, "")
		fs.Float64("target", 0, "")
		fs.Bool("keep", false, "")
		fs.Duration("duration", time.Second, "")
		fs.IP("addr", nil, "")
		err := fs.Parse([]string{c.args})
		if err == nil {
			t.Fatalf("%s: parsed", c.args)
		}
		got := describeFlagError(err)
		if c.want == "" {
			if got != err {
				t.Errorf("%s: %q changed to %q, want it unchanged", c.args, err, got)
			}
			continue
		}
		if got.Error() != c.want {
			t.Errorf("%s: %q, want %q", c.args, got, c.want)
		}
	}
}

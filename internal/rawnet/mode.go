package rawnet

import (
	"os"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// EnvVar names the environment variable that turns raw socket calls off:
// "off", or "on" (the default). It lets a user who suspects them rule
// them out of a result without another build.
const EnvVar = "DBPROBE_RAWNET"

// enabled reports whether Wrap makes connections raw. It reads EnvVar at
// every Wrap, that is once per connection; an unknown value leaves
// connections as package net makes them (Check refuses it beforehand).
func enabled() bool {
	on, ok := parse(os.Getenv(EnvVar))
	return supported && on && ok
}

// parse reads a value of EnvVar: whether it turns raw calls on, and
// whether it is one of the accepted values (empty is the default, on).
func parse(v string) (on, ok bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "on":
		return true, true
	case "off":
		return false, true
	}
	return false, false
}

// Check returns a bad-input error when EnvVar holds neither on nor off.
// The drivers that wrap their connections call it first in Open, so that
// a mistyped value stops the command with one line (exit 2) rather than
// running with a setting the user did not ask for.
func Check() error {
	if v := os.Getenv(EnvVar); v != "" {
		if _, ok := parse(v); !ok {
			return badinput.New("%s=%q: give on (raw system calls on the database's sockets, the default) or off (package net's reads and writes)", EnvVar, v)
		}
	}
	return nil
}

// Describe says for the run header whether Wrap makes connections raw,
// "on" or "off", and what decided it: EnvVar, "default", or "Linux only"
// on other systems.
func Describe() (value, source string) {
	if !supported {
		return "off", "Linux only"
	}
	source = "default"
	if strings.TrimSpace(os.Getenv(EnvVar)) != "" {
		source = EnvVar
	}
	if enabled() {
		return "on", source
	}
	return "off", source
}

// Setting is Describe as one header value: "on (default)", "off
// (DBPROBE_RAWNET)", "off (Linux only)".
func Setting() string {
	v, src := Describe()
	return v + " (" + src + ")"
}

package rawnet

import (
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

func TestSwitch(t *testing.T) {
	cases := []struct {
		env        string
		raw        bool   // Wrap makes a TCP connection raw
		bad        bool   // Check refuses the value
		value, src string // Describe
	}{
		{env: "", raw: true, value: "on", src: "default"},
		{env: "on", raw: true, value: "on", src: EnvVar},
		{env: "off", raw: false, value: "off", src: EnvVar},
		{env: " OFF ", raw: false, value: "off", src: EnvVar},
		{env: "0", raw: false, bad: true, value: "off", src: EnvVar},
		{env: "false", raw: false, bad: true, value: "off", src: EnvVar},
	}
	for _, tc := range cases {
		t.Run("DBPROBE_RAWNET="+tc.env, func(t *testing.T) {
			t.Setenv(EnvVar, tc.env)
			if runtime.GOOS != "linux" {
				tc.raw, tc.value, tc.src = false, "off", "Linux only"
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			raw := Wrap(c) != c
			if raw != tc.raw {
				t.Errorf("Wrap made the connection raw: %v, want %v", raw, tc.raw)
			}
			err = Check()
			if tc.bad != (err != nil) {
				t.Fatalf("Check: %v, want an error: %v", err, tc.bad)
			}
			if err != nil {
				msg := err.Error()
				if !badinput.Is(err) || strings.Contains(msg, "\n") || !strings.Contains(msg, EnvVar) || !strings.Contains(msg, "on (") || !strings.Contains(msg, "off (") {
					t.Errorf("Check: %q, want one line of bad input naming %s, on and off", msg, EnvVar)
				}
			}
			if v, src := Describe(); v != tc.value || src != tc.src {
				t.Errorf("Describe: %s (%s), want %s (%s)", v, src, tc.value, tc.src)
			}
		})
	}
}

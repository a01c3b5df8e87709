package redis_test

import (
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/rawnet"
)

// An unknown DBPROBE_RAWNET is refused before connecting: no server
// listens at the URL, and the error is about the variable, not the
// unreachable server.
func TestUnknownRawnetValue(t *testing.T) {
	t.Setenv(rawnet.EnvVar, "no")
	db, err := drivertest.OpenURL(t, "redis://127.0.0.1:1/0", "", driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		t.Fatal("Open under DBPROBE_RAWNET=no succeeded")
	}
	if !badinput.Is(err) || !strings.Contains(err.Error(), rawnet.EnvVar) {
		t.Errorf("Open under DBPROBE_RAWNET=no: %v, want bad input naming %s", err, rawnet.EnvVar)
	}
}

package testdb

import (
	"os/exec"
	"strings"
	"testing"
)

// scripts/lib/servers.sh keeps why a server did not start for its tests
// (DBPROBE_<SERVER>_UNAVAILABLE): the first line of its output that names
// the cause, not the log's closing "[ERROR] Aborting", and nothing when the
// server started.
func TestServersScriptKeepsWhyAStartFailed(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	script := `set -euo pipefail
source scripts/lib/servers.sh
fails() {
	echo "mariadbd: starting" >&2
	printf '2026-11-28  4:40:00 0 [ERROR] InnoDB: io_setup() failed\twith EAGAIN\n' >&2
	echo "2026-11-28  4:40:00 0 [ERROR] Aborting" >&2
	return 1
}
starts() { echo "listening" >&2; export STARTED=yes; }
start_logged FAILED fails || echo "fails returned $?"
start_logged OK starts
echo "FAILED=${FAILED:-}"
echo "OK=${OK:-} STARTED=${STARTED:-}"
echo "var=$(unavailable_var mariadb)"
`
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		"fails returned 1\n",
		"FAILED=2026-11-28  4:40:00 0 [ERROR] InnoDB: io_setup() failed with EAGAIN\n",
		"OK= STARTED=yes\n",
		"var=DBPROBE_MYSQL_UNAVAILABLE\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

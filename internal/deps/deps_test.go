// Package deps holds the test that keeps dbprobe's data flowing one way
// (ycsb → runner → driver; runner → measure → result; see DESIGN.md):
// the packages that describe work and figures import no database code,
// the runner knows no experiment, and none reaches back up the chain.
package deps

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// forbidden lists, per package, import path prefixes it must not depend
// on, directly or indirectly.
var forbidden = map[string][]string{
	"dbprobe/internal/keygen":   {"dbprobe/internal/", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/"},
	"dbprobe/internal/workload": {"dbprobe/internal/driver", "dbprobe/internal/runner", "dbprobe/internal/ycsb", "dbprobe/internal/measure", "dbprobe/internal/result", "dbprobe/internal/cli", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/"},
	"dbprobe/internal/measure":  {"dbprobe/internal/", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/"},
	"dbprobe/internal/result":   {"dbprobe/internal/driver", "dbprobe/internal/runner", "dbprobe/internal/workload", "dbprobe/internal/cli", "dbprobe/internal/config", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/"},
	"dbprobe/internal/runner":   {"dbprobe/internal/result", "dbprobe/internal/cli", "dbprobe/internal/config", "dbprobe/internal/workload", "dbprobe/internal/keygen", "dbprobe/internal/ycsb", "dbprobe/internal/driver/", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/"},
	"dbprobe/internal/ycsb":     {"dbprobe/internal/cli", "dbprobe/internal/driver/", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/", "github.com/spf13/"},
	// What every experiment shares names no database and no experiment,
	// and knows nothing of the command line.
	"dbprobe/internal/experiment": {"dbprobe/internal/cli", "dbprobe/internal/ycsb", "dbprobe/internal/workload", "dbprobe/internal/driver/", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/", "github.com/spf13/"},
	"dbprobe/internal/monitor":    {"dbprobe/internal/driver/", "dbprobe/internal/runner", "dbprobe/internal/result", "dbprobe/internal/report", "dbprobe/internal/cli", "dbprobe/internal/config", "dbprobe/internal/workload", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/"},
	"dbprobe/internal/driver":     {"dbprobe/internal/runner", "dbprobe/internal/measure", "dbprobe/internal/result", "dbprobe/internal/cli", "dbprobe/internal/workload"},
}

// allowed are dependencies a forbidden prefix would otherwise catch.
var allowed = map[string]bool{
	"dbprobe/internal/measure": true, // result formats measure's summaries
}

func TestDataFlowsOneWay(t *testing.T) {
	for pkg, bad := range forbidden {
		out, err := exec.Command("go", "list", "-deps", "-json=ImportPath", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		dec := json.NewDecoder(strings.NewReader(string(out)))
		for dec.More() {
			var p struct{ ImportPath string }
			if err := dec.Decode(&p); err != nil {
				t.Fatal(err)
			}
			if p.ImportPath == pkg || (allowed[p.ImportPath] && pkg == "dbprobe/internal/result") {
				continue
			}
			for _, prefix := range bad {
				if strings.HasPrefix(p.ImportPath, prefix) {
					t.Errorf("%s depends on %s", pkg, p.ImportPath)
				}
			}
		}
	}
}

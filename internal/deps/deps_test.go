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
	"github.com/dbprobe/dbprobe/internal/keygen":   {"github.com/dbprobe/dbprobe/internal/", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/"},
	"github.com/dbprobe/dbprobe/internal/workload": {"github.com/dbprobe/dbprobe/internal/driver", "github.com/dbprobe/dbprobe/internal/runner", "github.com/dbprobe/dbprobe/internal/ycsb", "github.com/dbprobe/dbprobe/internal/measure", "github.com/dbprobe/dbprobe/internal/result", "github.com/dbprobe/dbprobe/internal/cli", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/"},
	"github.com/dbprobe/dbprobe/internal/measure":  {"github.com/dbprobe/dbprobe/internal/", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/"},
	"github.com/dbprobe/dbprobe/internal/result":   {"github.com/dbprobe/dbprobe/internal/driver", "github.com/dbprobe/dbprobe/internal/runner", "github.com/dbprobe/dbprobe/internal/workload", "github.com/dbprobe/dbprobe/internal/cli", "github.com/dbprobe/dbprobe/internal/config", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/"},
	"github.com/dbprobe/dbprobe/internal/runner":   {"github.com/dbprobe/dbprobe/internal/result", "github.com/dbprobe/dbprobe/internal/cli", "github.com/dbprobe/dbprobe/internal/config", "github.com/dbprobe/dbprobe/internal/workload", "github.com/dbprobe/dbprobe/internal/keygen", "github.com/dbprobe/dbprobe/internal/ycsb", "github.com/dbprobe/dbprobe/internal/driver/", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/"},
	"github.com/dbprobe/dbprobe/internal/ycsb":     {"github.com/dbprobe/dbprobe/internal/cli", "github.com/dbprobe/dbprobe/internal/driver/", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/", "github.com/spf13/"},
	// What every experiment shares names no database and no experiment,
	// and knows nothing of the command line.
	"github.com/dbprobe/dbprobe/internal/experiment": {"github.com/dbprobe/dbprobe/internal/cli", "github.com/dbprobe/dbprobe/internal/ycsb", "github.com/dbprobe/dbprobe/internal/workload", "github.com/dbprobe/dbprobe/internal/driver/", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/", "github.com/spf13/"},
	// The shard layer spreads a table over databases it never names.
	"github.com/dbprobe/dbprobe/internal/shard":   {"github.com/dbprobe/dbprobe/internal/cli", "github.com/dbprobe/dbprobe/internal/ycsb", "github.com/dbprobe/dbprobe/internal/experiment", "github.com/dbprobe/dbprobe/internal/runner", "github.com/dbprobe/dbprobe/internal/driver/", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/", "github.com/spf13/"},
	"github.com/dbprobe/dbprobe/internal/monitor": {"github.com/dbprobe/dbprobe/internal/driver/", "github.com/dbprobe/dbprobe/internal/runner", "github.com/dbprobe/dbprobe/internal/result", "github.com/dbprobe/dbprobe/internal/report", "github.com/dbprobe/dbprobe/internal/cli", "github.com/dbprobe/dbprobe/internal/config", "github.com/dbprobe/dbprobe/internal/workload", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/"},
	// Reads from a replica name no database: the SQL is the drivers'.
	"github.com/dbprobe/dbprobe/internal/replica": {"github.com/dbprobe/dbprobe/internal/cli", "github.com/dbprobe/dbprobe/internal/ycsb", "github.com/dbprobe/dbprobe/internal/driver/", "github.com/jackc/", "github.com/mattn/", "modernc.org/", "github.com/go-sql-driver/", "github.com/microsoft/", "github.com/redis/", "github.com/spf13/"},
	"github.com/dbprobe/dbprobe/internal/driver":  {"github.com/dbprobe/dbprobe/internal/runner", "github.com/dbprobe/dbprobe/internal/measure", "github.com/dbprobe/dbprobe/internal/result", "github.com/dbprobe/dbprobe/internal/cli", "github.com/dbprobe/dbprobe/internal/workload"},
}

// allowed are dependencies a forbidden prefix would otherwise catch.
var allowed = map[string]bool{
	"github.com/dbprobe/dbprobe/internal/measure": true, // result formats measure's summaries
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
			if p.ImportPath == pkg || (allowed[p.ImportPath] && pkg == "github.com/dbprobe/dbprobe/internal/result") {
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

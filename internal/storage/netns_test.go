package storage

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/testdb"
	"github.com/dbprobe/dbprobe/internal/testnet"
)

// postgresBehindRate starts a throwaway PostgreSQL in a network namespace
// of the test's (testnet), reached through a veth pair whose namespace end
// sends at most mbit megabits per second (a tbf qdisc: this kernel has no
// netem, but a token bucket it has). The namespace, the pair and the
// server go at the test's end.
func postgresBehindRate(t *testing.T, mbit int) *instance.Server {
	t.Helper()
	needRoot(t)
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			testdb.Unavailable(t, tool+" is missing: install the Debian package iproute2")
		}
	}
	ns := testnet.New(t, "dbprobe-storage-")
	// The server's side sends the rows: its egress is the link's cap.
	ns.Exec(t, "", "tc", "qdisc", "add", "dev", ns.Link, "root", "tbf",
		"rate", fmt.Sprintf("%dmbit", mbit), "burst", "32kb", "latency", "100ms")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := instance.Start(ctx, instance.Postgres, instance.Options{Addr: ns.Addr, Netns: ns.Name})
	if err != nil {
		testdb.Unavailable(t, "PostgreSQL did not start in the namespace: "+err.Error())
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A read through a link capped at 40 Mbit/s (5 MB/s) runs at the cap and
// says the network limited it: the server's sessions wait to send rows
// while the client has CPU to spare.
func TestReadNetworkLimited(t *testing.T) {
	const mbit = 40
	srv := postgresBehindRate(t, mbit)
	c := small(t, Read, srv.URL())
	c.Size, c.Duration = 8_000_000, 4*time.Second
	// A link of the test's own, between two namespaces of this machine.
	c.Target.AllowInsecureTLS = true
	o, st := mustRun(t, c)
	wire := float64(mbit) * 1e6 / 8
	if len(st.Steps) != 1 || st.Rate > 1.05*wire || st.Rate < 0.6*wire {
		t.Errorf("read at %.2f MB/s through a %.1f MB/s link\n%s", st.Rate/1e6, wire/1e6, o.text)
	}
	if v := st.Steps[0].Verdict; len(st.Steps) == 1 && !strings.HasPrefix(v, "network-limited: ") {
		t.Errorf("verdict %q\n%s", v, o.text)
	}
	t.Logf("%.2f MB/s: %s", st.Rate/1e6, st.Steps[0].Verdict)
}

package storage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/instance"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// postgresBehindRate starts a throwaway PostgreSQL in a network namespace
// of the test's, reached through a veth pair whose namespace end sends at
// most mbit megabits per second (a tbf qdisc: this kernel has no netem,
// but a token bucket it has). The namespace, the pair and the server go
// at the test's end. Names and addresses carry the test process's PID.
func postgresBehindRate(t *testing.T, mbit int) *instance.Server {
	t.Helper()
	needRoot(t)
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			testdb.Unavailable(t, tool+" is missing: install the Debian package iproute2")
		}
	}
	pid := os.Getpid()
	ns := fmt.Sprintf("dbprobe-storage-%d", pid)
	host, inside := fmt.Sprintf("vsh%d", pid%1000000), fmt.Sprintf("vsn%d", pid%1000000)
	// 172.30.0.0/16 in /30s by PID: apart from the fault tests' 10.64/10.
	third, last := (pid>>6)&0xff, (pid&0x3f)*4
	hostAddr, nsAddr := fmt.Sprintf("172.30.%d.%d", third, last+1), fmt.Sprintf("172.30.%d.%d", third, last+2)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
	}
	run("ip", "netns", "add", ns)
	t.Cleanup(func() {
		exec.Command("ip", "link", "del", host).Run()
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", ns, err, out)
		}
	})
	run("ip", "link", "add", host, "type", "veth", "peer", "name", inside, "netns", ns)
	run("ip", "addr", "add", hostAddr+"/30", "dev", host)
	run("ip", "link", "set", host, "up")
	run("ip", "-n", ns, "addr", "add", nsAddr+"/30", "dev", inside)
	run("ip", "-n", ns, "link", "set", inside, "up")
	run("ip", "-n", ns, "link", "set", "lo", "up")
	// The server's side sends the rows: its egress is the link's cap.
	run("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", inside, "root", "tbf",
		"rate", fmt.Sprintf("%dmbit", mbit), "burst", "32kb", "latency", "100ms")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := instance.Start(ctx, instance.Postgres, instance.Options{Addr: nsAddr, Netns: ns})
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

// Package testnet makes network namespaces for tests that cut, slow or
// cap the link to a server: a namespace of the test's own, joined to the
// host's by a veth pair, removed when the test ends. The fault tests
// (internal/faults) and the storage tests of a capped link
// (internal/storage) use it; it needs root and iproute2's ip, which the
// caller checks first so that it can skip with its own words.
package testnet

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// seq numbers the namespaces this test process makes.
var seq atomic.Int32

// Namespace is a network namespace a test made, joined to this process's
// by a veth pair: Host is the address of this side, Addr the namespace's,
// Link the name of the pair's end inside the namespace.
type Namespace struct {
	Name       string
	Host, Addr string
	Link       string
}

// New makes a network namespace named prefix, the process's PID and a
// sequence number ("dbprobe-faults-1234-1": a test's TestMain can remove
// those a killed process left), and a veth pair into it, both ends up
// with addresses of a /30 of their own in 10.64.0.0/10 and the
// namespace's loopback up. Both go when the test ends, failed or not.
// Names and addresses carry the PID, so that the tests of two packages
// running at once do not meet.
func New(t testing.TB, prefix string) *Namespace {
	t.Helper()
	pid := os.Getpid()
	n := int(seq.Add(1))
	ns := &Namespace{
		Name: fmt.Sprintf("%s%d-%d", prefix, pid, n),
		Link: fmt.Sprintf("vfn%d.%d", pid%1000000, n%100),
	}
	host := fmt.Sprintf("vfh%d.%d", pid%1000000, n%100) // 15 bytes at most
	// 10.64.0.0/10 is split in /30s by PID and sequence number.
	block := (pid*8 + n%8) % (1 << 20)
	base := fmt.Sprintf("10.%d.%d.%d", 64+block>>14, (block>>6)&0xff, (block&0x3f)*4)
	prefixIP := base[:strings.LastIndexByte(base, '.')+1]
	last := (block & 0x3f) * 4
	ns.Host = fmt.Sprintf("%s%d", prefixIP, last+1)
	ns.Addr = fmt.Sprintf("%s%d", prefixIP, last+2)

	run(t, "", "ip", "netns", "add", ns.Name)
	t.Cleanup(func() {
		// Deleting the namespace deletes its end of the pair, and with it
		// the other.
		exec.Command("ip", "link", "del", host).Run()
		if out, err := exec.Command("ip", "netns", "del", ns.Name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", ns.Name, err, out)
		}
	})
	run(t, "", "ip", "link", "add", host, "type", "veth", "peer", "name", ns.Link, "netns", ns.Name)
	run(t, "", "ip", "addr", "add", ns.Host+"/30", "dev", host)
	run(t, "", "ip", "link", "set", host, "up")
	run(t, "", "ip", "-n", ns.Name, "addr", "add", ns.Addr+"/30", "dev", ns.Link)
	run(t, "", "ip", "-n", ns.Name, "link", "set", ns.Link, "up")
	run(t, "", "ip", "-n", ns.Name, "link", "set", "lo", "up")
	return ns
}

// Exec runs a command inside the namespace with stdin as its input and
// returns its output; it fails t with the output when the command fails.
func (ns *Namespace) Exec(t testing.TB, stdin, name string, args ...string) string {
	t.Helper()
	return run(t, stdin, "ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
}

// run runs a setup command and fails t with its output when it fails.
func run(t testing.TB, stdin, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stdin)
	}
	return string(out)
}

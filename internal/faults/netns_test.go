package faults

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// netnsPrefix starts the name of a test's network namespace; the test
// process's PID follows, so that removeStale can tell those of dead
// processes.
const netnsPrefix = "dbprobe-faults-"

// netnsSeq numbers the namespaces this test process makes.
var netnsSeq atomic.Int32

// netNS is a network namespace a test made, joined to this process's by a
// veth pair: Host is the address of this side, Addr the namespace's.
type netNS struct {
	Name       string
	Host, Addr string
	link       string // the veth end inside the namespace
}

// newNetNS makes a network namespace and a veth pair into it, both ends
// up with addresses of a /30 of their own; both are removed when the test
// ends, failed or not. Names and addresses carry the process's PID, so
// that tests of other processes do not meet them.
func newNetNS(t *testing.T) *netNS {
	t.Helper()
	needRoot(t, "ip", "nft")
	pid := os.Getpid()
	n := int(netnsSeq.Add(1))
	ns := &netNS{
		Name: fmt.Sprintf("%s%d-%d", netnsPrefix, pid, n),
		link: fmt.Sprintf("vfn%d.%d", pid%1000000, n%100),
	}
	host := fmt.Sprintf("vfh%d.%d", pid%1000000, n%100) // 15 bytes at most
	// 10.64.0.0/10 is split in /30s by PID and sequence number.
	block := (pid*8 + n%8) % (1 << 20)
	base := fmt.Sprintf("10.%d.%d.%d", 64+block>>14, (block>>6)&0xff, (block&0x3f)*4)
	prefix := base[:strings.LastIndexByte(base, '.')+1]
	last := (block & 0x3f) * 4
	ns.Host = fmt.Sprintf("%s%d", prefix, last+1)
	ns.Addr = fmt.Sprintf("%s%d", prefix, last+2)

	if out, err := exec.Command("ip", "netns", "add", ns.Name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() {
		// Deleting the namespace deletes its end of the pair, and with it
		// the other.
		exec.Command("ip", "link", "del", host).Run()
		if out, err := exec.Command("ip", "netns", "del", ns.Name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", ns.Name, err, out)
		}
	})
	sh(t, "ip", "link", "add", host, "type", "veth", "peer", "name", ns.link, "netns", ns.Name)
	sh(t, "ip", "addr", "add", ns.Host+"/30", "dev", host)
	sh(t, "ip", "link", "set", host, "up")
	sh(t, "ip", "-n", ns.Name, "addr", "add", ns.Addr+"/30", "dev", ns.link)
	sh(t, "ip", "-n", ns.Name, "link", "set", ns.link, "up")
	sh(t, "ip", "-n", ns.Name, "link", "set", "lo", "up")
	return ns
}

// nft runs an nftables script inside the namespace.
func (ns *netNS) nft(t *testing.T, script string) {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", ns.Name, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft in %s: %v: %s\n%s", ns.Name, err, out, script)
	}
}

// faultTable is the nftables table that holds a fault's rules.
const faultTable = "dbprobe_fault"

// drop drops packets to and from the namespace's veth end at random, pct
// percent in each direction; 100 drops them all, a cut that, unlike a
// link set down, tells neither side anything. Heal removes it.
func (ns *netNS) drop(t *testing.T, pct int) {
	t.Helper()
	match := ""
	if pct < 100 {
		match = fmt.Sprintf("numgen random mod 100 < %d ", pct)
	}
	ns.nft(t, fmt.Sprintf(`table inet %[1]s {
	chain in {
		type filter hook input priority 0; policy accept;
		iifname "%[2]s" %[3]sdrop
	}
	chain out {
		type filter hook output priority 0; policy accept;
		oifname "%[2]s" %[3]sdrop
	}
}
`, faultTable, ns.link, match))
}

// heal removes the fault's rules.
func (ns *netNS) heal(t *testing.T) {
	t.Helper()
	ns.nft(t, "delete table inet "+faultTable+"\n")
}

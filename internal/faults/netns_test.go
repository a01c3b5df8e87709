package faults

import (
	"fmt"
	"testing"

	"github.com/dbprobe/dbprobe/internal/testnet"
)

// netnsPrefix starts the name of a test's network namespace; the test
// process's PID follows, so that removeStale can tell those of dead
// processes.
const netnsPrefix = "dbprobe-faults-"

// netNS is a network namespace a test made (testnet), with the faults
// this package puts on its link.
type netNS struct{ *testnet.Namespace }

// newNetNS makes a network namespace and a veth pair into it
// (testnet.New), removed when the test ends, failed or not.
func newNetNS(t *testing.T) *netNS {
	t.Helper()
	needRoot(t, "ip", "nft")
	return &netNS{testnet.New(t, netnsPrefix)}
}

// nft runs an nftables script inside the namespace.
func (ns *netNS) nft(t *testing.T, script string) {
	t.Helper()
	ns.Exec(t, script, "nft", "-f", "-")
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
`, faultTable, ns.Link, match))
}

// heal removes the fault's rules.
func (ns *netNS) heal(t *testing.T) {
	t.Helper()
	ns.nft(t, "delete table inet "+faultTable+"\n")
}

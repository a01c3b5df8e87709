// Package faults holds dbprobe's end-to-end fault tests: the binary is
// built once and run against databases that meet the faults a DBA meets
// in real tests, and each test checks what dbprobe then says and does —
// its exit status, its lines, its JSON result — and that the database's
// files are intact afterwards.
//
//   - A full disk: SQLite, PostgreSQL and MariaDB on a small loop-mounted
//     ext4 file system (losetup, mkfs.ext4, mount).
//   - A cut or lossy network: PostgreSQL in a network namespace the test
//     makes, behind a veth pair (ip netns), with nftables rules in the
//     namespace that drop every packet, or a share of them at random.
//     There is no netem in the kernels these tests run on, so a delay is
//     made by a relay in the test that holds each chunk 20 ms in each
//     direction.
//   - A server that does not come back: killed in the middle of a phase
//     without a duration and never started again.
//   - Too few connections: servers started with a small max_connections
//     or maxclients.
//
// They need root and those tools: without them each test is skipped with
// a message saying so, except under CI=true, where it fails. They touch
// only the namespaces, links, mounts and processes they made, whose names
// carry the test process's PID, and remove them at the end even when the
// test fails. Only _test.go files hold code: the package builds nothing
// into dbprobe.
package faults

package cli

import "github.com/spf13/cobra"

// addReadDBFlag adds --read-db, which sends a run's reads and scans to a
// replica (internal/ycsb/replica.go).
func addReadDBFlag(cmd *cobra.Command, o *options) {
	f := cmd.Flags()
	f.StringVar(&o.readDB, "read-db", "", "send the run's reads and scans to this replica of --db (same kind of URL; --password-file and DBPROBE_PASSWORD serve it too when it has no password); updates, inserts and read-modify-writes stay on --db. The run measures the replica's lag with a heartbeat table it creates on --db and drops after, and counts stale reads from a version stamp in the values written. Refused unless it is a replica of --db: PostgreSQL and MySQL/MariaDB")
	setGroup(f, groupTarget, "read-db")
	register(cmd, "read-db", completeDB)
}

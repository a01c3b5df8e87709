package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/fleet"
	"github.com/dbprobe/dbprobe/internal/ycsb"
)

// clientOptions are the flags of one client among several running one
// experiment together (docs/several-clients.md).
type clientOptions struct {
	clientIndex   int
	clientCount   int
	startAt       string
	monitorClient int
}

// addClientFlags adds --client-index, --client-count, --start-at and
// --monitor-client.
func addClientFlags(cmd *cobra.Command, o *clientOptions) {
	f := cmd.Flags()
	f.IntVar(&o.clientIndex, "client-index", 0, "this client's number, 0 to --client-count - 1, when several dbprobe processes run one experiment together; each takes its slice: in a load its own contiguous range of records (YCSB's insertstart/insertcount), in a run its share of operationcount and target, and inserts with key numbers no other client uses; combine their --out results with dbprobe merge (a Kubernetes Indexed Job sets it from JOB_COMPLETION_INDEX)")
	f.IntVar(&o.clientCount, "client-count", 1, "how many clients run the experiment together (each with its own --client-index); before starting each one checks that the server accepts all their connections")
	f.StringVar(&o.startAt, "start-at", "", "start the first phase's measurement at this time, RFC 3339 (e.g. 2026-11-27T20:00:00Z), once connected and ready, so that several clients start together; a time in the past is refused")
	f.IntVar(&o.monitorClient, "monitor-client", 0, "with --client-count, the client that monitors the database (the others do not, so that N clients do not sample the server N times); -1 for none")
	setGroup(f, groupShape, "client-index", "client-count", "start-at")
	setGroup(f, groupMonitor, "monitor-client")
}

// config turns the flags into the experiment's client configuration,
// refusing a bad index or a start time that is not ahead.
func (o *clientOptions) config(cmd *cobra.Command) (ycsb.Clients, error) {
	c := ycsb.Clients{Slice: fleet.Slice{Index: o.clientIndex, Count: o.clientCount}, MonitorClient: o.monitorClient}
	if cmd.Flags().Changed("client-index") && !cmd.Flags().Changed("client-count") {
		return c, badinput.New("--client-index %d without --client-count: give both, the same --client-count to every client", o.clientIndex)
	}
	if err := c.Slice.Validate(); err != nil {
		return c, err
	}
	if o.startAt != "" {
		t, err := fleet.ParseStartAt(o.startAt, time.Now())
		if err != nil {
			return c, err
		}
		c.StartAt = t
	}
	return c, nil
}

package result

import "time"

// Client is a phase's place among the clients of a run spread over
// several processes or machines (--client-index, --client-count): what it
// did of the work and how its clock stood against the database server's.
// It is in the header of each client's result, and dbprobe merge checks
// and combines them.
type Client struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// Slice says in a line what this client did of the phase ("client 1
	// of 3: records 334 to 666 …").
	Slice string `json:"slice"`
	// InsertStart and InsertCount are the records a load client inserts;
	// Operations is a run client's share of operationcount (0 for a run
	// bounded by time); InsertStride and InsertOffset give its run
	// inserts' key numbers: recordcount + k×InsertStride + InsertOffset.
	InsertStart  int64 `json:"insert_start,omitempty"`
	InsertCount  int64 `json:"insert_count,omitempty"`
	Operations   int64 `json:"operations,omitempty"`
	InsertStride int64 `json:"insert_stride,omitempty"`
	InsertOffset int64 `json:"insert_offset,omitempty"`
	// Target is this client's share of the run's target rate, ops/s.
	Target float64 `json:"target,omitempty"`
	// StartAt is the agreed start of the measured phase (--start-at);
	// zero when none was given.
	StartAt time.Time `json:"start_at,omitzero"`
	// Monitors says this client sampled the database (only one does by
	// default, so that N clients do not sample the server N times).
	Monitors bool `json:"monitors"`
	// Clock is this client's clock against the server's; nil when the
	// database cannot say its time.
	Clock *ClockOffset `json:"clock,omitempty"`
}

// ClockOffset is the database server's clock less the client's, measured
// in the middle of the shortest of a few round trips that read it.
type ClockOffset struct {
	OffsetMicros int64 `json:"offset_us"`
	// RTTMicros is that round trip: the offset is right to half of it.
	RTTMicros int64 `json:"rtt_us"`
	// Query is what read the server's clock.
	Query string    `json:"query"`
	At    time.Time `json:"at"`
}

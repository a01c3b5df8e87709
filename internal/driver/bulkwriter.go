package driver

import (
	"context"
	"fmt"
	"strconv"
)

// SessionBulkWriter is a BulkWriter over a key-value Session opened on a
// DataTable's Table(): a batch is one InsertBatch, so it takes the path
// InsertBatch takes — the bulk API when Options.BulkLoad allows it,
// multi-row INSERT statements otherwise, the comparison the bulk
// experiment draws — in one transaction. Ids go as their decimal text,
// which every SQL database turns into the BIGINT key on the way in.
type SessionBulkWriter struct {
	s   Session
	how func() string
	// Scratch reused by every batch: the ids' text, and the slices
	// InsertBatch takes.
	text   []byte
	keys   [][]byte
	values [][][]byte
	fields [][]byte
}

// NewSessionBulkWriter returns a writer over s; how names the path, asked
// at each call of How.
func NewSessionBulkWriter(s Session, how func() string) *SessionBulkWriter {
	return &SessionBulkWriter{s: s, how: how}
}

// Write loads one batch with InsertBatch.
func (w *SessionBulkWriter) Write(ctx context.Context, ids []int64, payloads [][]byte) error {
	if len(ids) != len(payloads) {
		return fmt.Errorf("a batch of %d ids and %d payloads", len(ids), len(payloads))
	}
	w.text = w.text[:0]
	ends := make([]int, len(ids))
	for i, id := range ids {
		w.text = strconv.AppendInt(w.text, id, 10)
		ends[i] = len(w.text)
	}
	w.keys, w.values, w.fields = w.keys[:0], w.values[:0], w.fields[:0]
	for i := range ids {
		w.fields = append(w.fields, payloads[i])
	}
	start := 0
	for i, end := range ends {
		w.keys = append(w.keys, w.text[start:end])
		w.values = append(w.values, w.fields[i:i+1:i+1])
		start = end
	}
	err := w.s.InsertBatch(ctx, w.keys, w.values)
	clear(w.fields) // keep nothing of the caller's
	return err
}

// How names the path the rows take.
func (w *SessionBulkWriter) How() string { return w.how() }

// Close closes the session.
func (w *SessionBulkWriter) Close() error { return w.s.Close() }

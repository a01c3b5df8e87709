package driver

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// batchSession records the batches InsertBatch is given.
type batchSession struct {
	Session
	got    []string
	closed bool
}

func (s *batchSession) InsertBatch(_ context.Context, keys [][]byte, values [][][]byte) error {
	for i, k := range keys {
		s.got = append(s.got, fmt.Sprintf("%s=%s/%d", k, values[i][0], len(values[i])))
	}
	return nil
}

func (s *batchSession) Close() error { s.closed = true; return nil }

// A batch of ids and payloads is one InsertBatch of decimal keys and
// one-field records, and the writer keeps nothing of the caller's.
func TestSessionBulkWriter(t *testing.T) {
	s := &batchSession{}
	w := NewSessionBulkWriter(s, func() string { return "the path" })
	payloads := [][]byte{[]byte("a"), []byte("bb"), []byte("c")}
	if err := w.Write(context.Background(), []int64{7, -12, 1 << 40}, payloads); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(context.Background(), []int64{8}, [][]byte{[]byte("d")}); err != nil {
		t.Fatal(err)
	}
	want := []string{"7=a/1", "-12=bb/1", "1099511627776=c/1", "8=d/1"}
	if fmt.Sprint(s.got) != fmt.Sprint(want) {
		t.Errorf("batches %q, want %q", s.got, want)
	}
	for _, f := range w.fields {
		if f != nil {
			t.Errorf("the writer keeps a payload: %q", f)
		}
	}
	if err := w.Write(context.Background(), []int64{1, 2}, payloads[:1]); err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("ids and payloads of different lengths: %v", err)
	}
	if w.How() != "the path" || w.Close() != nil || !s.closed {
		t.Error("How or Close does not reach the session")
	}
}

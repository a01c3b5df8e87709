package mysql

import (
	"context"
	"testing"
	"time"
)

// A session opened under a context that ends right after (the runner's
// reconnection has a timeout of its own) keeps its connection: the end of
// that context does not close it.
func TestSessionOutlivesItsOpeningContext(t *testing.T) {
	_, _, db, tbl := monitored(t, 1)
	opening, cancel := context.WithCancel(context.Background())
	sess, err := db.Session(opening, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	cancel()
	s := sess.(*session)
	id := s.connID
	if err := s.Insert(context.Background(), []byte("k"), [][]byte{[]byte("v")}); err != nil {
		t.Fatal(err)
	}
	if s.connID != id {
		t.Errorf("the session opened a second connection (%d after %d) once its opening context ended", s.connID, id)
	}
}

// With --op-timeout every operation has a context of its own, cancelled
// when the operation is over: that end must not close the connection for
// the next operation.
func TestContextPerOperationKeepsTheConnection(t *testing.T) {
	_, _, db, tbl := monitored(t, 1)
	sess, err := db.Session(context.Background(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	s := sess.(*session)
	id := s.connID
	for i := range 5 {
		op, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := s.Insert(op, []byte{'k', byte('0' + i)}, [][]byte{[]byte("v")})
		cancel()
		if err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	if s.connID != id {
		t.Errorf("operations under contexts of their own opened new connections (%d after %d)", s.connID, id)
	}
}

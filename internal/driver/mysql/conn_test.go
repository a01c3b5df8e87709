package mysql

import (
	"context"
	"testing"
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

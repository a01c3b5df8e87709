package workload

import "testing"

// TestInsertsOfOneClientAmongSeveral checks that a client's run inserts
// take only its own key numbers (recordcount + k×stride + offset), that
// its reads come back to them once acknowledged, and that they never
// touch another client's.
func TestInsertsOfOneClientAmongSeveral(t *testing.T) {
	for _, dist := range []Distribution{Latest, Zipfian, Uniform} {
		s := coreSpec()
		s.RecordCount, s.InsertCount = 100, 100
		s.Proportions = [numOperations]float64{Read: 0.5, Insert: 0.5}
		s.RequestDistribution = dist
		s.InsertStride, s.InsertOffset = 3, 2
		s.OperationCount = 4000
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		g := NewGenerator(s, NewShared(s), 9)
		inserted := map[int64]bool{}
		readNew := 0
		var op Op
		for range 4000 {
			g.Next(&op)
			switch op.Kind {
			case Insert:
				if op.KeyNum < 100 || (op.KeyNum-100)%3 != 2 {
					t.Fatalf("%s: inserted key number %d, not this client's (100 + 3k + 2)", dist, op.KeyNum)
				}
				if inserted[op.KeyNum] {
					t.Fatalf("%s: key number %d inserted twice", dist, op.KeyNum)
				}
				inserted[op.KeyNum] = true
				g.Acknowledge(op.KeyNum)
			case Read:
				if op.KeyNum >= 100 {
					if !inserted[op.KeyNum] {
						t.Fatalf("%s: read key number %d, which this client never inserted", dist, op.KeyNum)
					}
					readNew++
				}
			}
		}
		if dist == Latest && readNew == 0 {
			t.Fatalf("latest never read a key this client inserted")
		}
	}
	s := coreSpec()
	s.InsertStride, s.InsertOffset = 3, 3
	if s.Validate() == nil {
		t.Fatal("an offset equal to the stride was accepted")
	}
}

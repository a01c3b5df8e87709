package workload

import (
	"math"
	"strings"
	"testing"
)

func coreSpec() *Spec {
	return &Spec{
		RecordCount: 1000, OperationCount: 1000, InsertStart: 0, InsertCount: 1000,
		FieldCount: 10, FieldLength: 100, MinFieldLength: 1, FieldNamePrefix: "field",
		ReadAllFields: true, Proportions: [5]float64{0.5, 0.5, 0, 0, 0},
		RequestDistribution: Zipfian, HotspotDataFraction: 0.2, HotspotOpnFraction: 0.8,
		ExponentialPercentile: 95, ExponentialFrac: 0.8571428571, ZeroPadding: 1,
		MinScanLength: 1, MaxScanLength: 100, ScanLengthDistribution: UniformLength, Table: "usertable",
	}
}

// The operation mix must follow the proportions: each share within 5
// standard deviations of its binomial expectation.
func TestMixFollowsProportions(t *testing.T) {
	s := coreSpec()
	s.Proportions = [5]float64{0.3, 0.2, 0.1, 0.15, 0.25}
	s.OperationCount = 200000
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	g := NewGenerator(s, NewShared(s), 42)
	const n = 200000
	var counts [5]int
	var op Op
	for range n {
		g.Next(&op)
		counts[op.Kind]++
		if op.Kind == Insert {
			g.Acknowledge(op.KeyNum)
		}
	}
	for i, p := range s.Proportions {
		sd := math.Sqrt(n * p * (1 - p))
		if d := math.Abs(float64(counts[i]) - n*p); d > 5*sd {
			t.Errorf("%v: %d of %d, want %.0f ± %.0f", Operation(i), counts[i], n, n*p, 5*sd)
		}
	}
}

func TestOperationsHaveTheirShape(t *testing.T) {
	s := coreSpec()
	s.ReadAllFields, s.WriteAllFields = false, false
	s.Proportions = [5]float64{0.2, 0.2, 0.2, 0.2, 0.2}
	g := NewGenerator(s, NewShared(s), 7)
	var op Op
	seenInsert := map[int64]bool{}
	for range 5000 {
		g.Next(&op)
		if !strings.HasPrefix(string(op.Key), "user") {
			t.Fatalf("key %q", op.Key)
		}
		switch op.Kind {
		case Read:
			if len(op.ReadFields) != 1 {
				t.Fatalf("read with readallfields=false reads %v", op.ReadFields)
			}
		case Update:
			if len(op.WriteFields) != 1 || len(op.Values) != 1 || len(op.Values[0]) != 100 {
				t.Fatalf("update writes fields %v values %d", op.WriteFields, len(op.Values))
			}
		case Insert:
			if op.KeyNum < s.RecordCount || seenInsert[op.KeyNum] || len(op.Values) != 10 {
				t.Fatalf("insert key %d (seen %v) with %d values", op.KeyNum, seenInsert[op.KeyNum], len(op.Values))
			}
			seenInsert[op.KeyNum] = true
			g.Acknowledge(op.KeyNum)
		case Scan:
			if op.ScanLength < 1 || op.ScanLength > 100 {
				t.Fatalf("scan length %d", op.ScanLength)
			}
		case ReadModifyWrite:
			if len(op.ReadFields) != 1 || len(op.WriteFields) != 1 {
				t.Fatalf("rmw reads %v writes %v", op.ReadFields, op.WriteFields)
			}
		}
		for _, v := range op.Values {
			for _, c := range v {
				if c < ' ' || c > '~' {
					t.Fatalf("value byte %q is not printable ASCII", c)
				}
			}
		}
		if op.Kind != Insert && op.KeyNum > g.shared.inserts.Last() {
			t.Fatalf("%v of key %d, not yet inserted (last %d)", op.Kind, op.KeyNum, g.shared.inserts.Last())
		}
	}
}

func TestReadAllAndWriteAll(t *testing.T) {
	s := coreSpec()
	s.WriteAllFields = true
	g := NewGenerator(s, NewShared(s), 1)
	var op Op
	for range 100 {
		g.Next(&op)
		if op.Kind == Read && op.ReadFields != nil {
			t.Fatalf("readallfields=true but read fields %v", op.ReadFields)
		}
		if op.Kind == Update && (len(op.WriteFields) != 10 || len(op.Values) != 10) {
			t.Fatalf("writeallfields=true but update writes %v", op.WriteFields)
		}
	}
}

// The values dataintegrity writes are YCSB's, so data loaded by either
// tool verifies in the other. The expected strings were printed by YCSB's
// rule run in Java (StringBuilder, String.hashCode).
func TestDeterministicValuesMatchYCSB(t *testing.T) {
	tests := []struct {
		key, field string
		n          int
		want       string
	}{
		{"user6284781860667377211", "field0", 100, "user6284781860667377211:field0:-56807877:2032869390:-165488160:1762371712:-169193395:-1039977118:-10"},
		{"user1", "field9", 37, "user1:field9:-1268390937:701431326:16"},
	}
	for _, tt := range tests {
		if got := string(deterministicValue(nil, []byte(tt.key), tt.field, tt.n)); got != tt.want {
			t.Errorf("deterministicValue(%s, %s, %d) = %q, want %q", tt.key, tt.field, tt.n, got, tt.want)
		}
	}
}

func TestVerify(t *testing.T) {
	s := coreSpec()
	s.DataIntegrity = true
	g := NewGenerator(s, NewShared(s), 1)
	key, values := g.Record(17)
	key = append([]byte(nil), key...)
	stored := make([][]byte, len(values))
	for i, v := range values {
		stored[i] = append([]byte(nil), v...)
	}
	if !g.Verify(key, nil, stored) {
		t.Fatal("the loaded record does not verify")
	}
	if !g.Verify(key, []int{3}, stored[3:4]) {
		t.Fatal("one field does not verify")
	}
	stored[4][10] ^= 1
	if g.Verify(key, nil, stored) {
		t.Fatal("a changed byte verified")
	}
	if g.Verify(key, nil, stored[:9]) {
		t.Fatal("a missing field verified")
	}
}

func TestValidateProportions(t *testing.T) {
	s := coreSpec()
	s.Proportions = [5]float64{0.33, 0.33, 0.34, 0, 0}
	if err := s.Validate(); err != nil {
		t.Fatalf("0.33+0.33+0.34: %v", err)
	}
	s.Proportions = [5]float64{0.5, 0.4, 0, 0, 0}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "sum to 1") {
		t.Fatalf("0.9: %v", err)
	}
}

// Counts past MaxCount are refused by name before any key generator
// overflows on them (recordcount=2^63-1 made NewScrambledZipfian panic).
func TestValidateRefusesHugeCounts(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(s *Spec)
	}{
		{"recordcount", func(s *Spec) { s.RecordCount, s.InsertCount = math.MaxInt64, math.MaxInt64 }},
		{"operationcount", func(s *Spec) { s.OperationCount = MaxCount + 1 }},
		{"insertstart", func(s *Spec) { s.InsertStart = math.MaxInt64 - 10 }},
	} {
		s := coreSpec()
		tc.set(s)
		if err := s.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.name+"=") {
			t.Errorf("%s too large: %v, want an error naming it", tc.name, err)
		}
	}
	s := coreSpec()
	s.RecordCount, s.InsertCount, s.OperationCount = MaxCount, MaxCount, MaxCount
	if err := s.Validate(); err != nil {
		t.Errorf("counts of MaxCount: %v", err)
	}
	// The run's key chooser over the whole range builds without panicking.
	_ = NewShared(s)
}

func BenchmarkNextWorkloadA(b *testing.B) {
	s := coreSpec()
	s.RecordCount, s.InsertCount = 1000000, 1000000
	g := NewGenerator(s, NewShared(s), 1)
	var op Op
	for b.Loop() {
		g.Next(&op)
	}
}

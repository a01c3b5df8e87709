package measure

import (
	"testing"
	"time"
)

func TestNowIsMonotonicAndConverts(t *testing.T) {
	a := Now()
	time.Sleep(2 * time.Millisecond)
	b := Now()
	if d := time.Duration(b - a); d < 2*time.Millisecond || d > time.Second {
		t.Fatalf("2 ms sleep measured as %s", d)
	}
	now := time.Now()
	if d := Wall(FromTime(now)).Sub(now); d < -time.Microsecond || d > time.Microsecond {
		t.Fatalf("round trip off by %s", d)
	}
	if d := Wall(Now()).Sub(time.Now()); d < -10*time.Millisecond || d > 10*time.Millisecond {
		t.Fatalf("Wall(Now()) is %s from time.Now()", d)
	}
}

func BenchmarkNow(b *testing.B) {
	for b.Loop() {
		Now()
	}
}

func BenchmarkTimeNow(b *testing.B) {
	for b.Loop() {
		time.Now()
	}
}

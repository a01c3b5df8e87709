package result

import (
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/measure"
)

func TestStatusLine(t *testing.T) {
	// A wall-clock time in the local zone prints the same digits whatever
	// the zone of the machine running the test.
	now := time.Date(2024, 1, 1, 12, 0, 10, 123456789, time.Local)
	read := measure.Summary{
		Name: "READ", Count: 6000, MeanMicros: 33.876, MinMicros: 14, MaxMicros: 900,
		Percentiles: ps([]float64{50, 90, 99, 99.9, 99.99}, 30, 50, 86, 400, 880),
	}
	update := measure.Summary{
		Name: "UPDATE", Count: 6000, MeanMicros: 120, MinMicros: 40, MaxMicros: 2000,
		// Not all of YCSB's, in another order, with one YCSB does not show.
		Percentiles: ps([]float64{99, 95, 50}, 700, 650, 100),
	}
	failed := measure.Summary{Name: "INSERT", Statuses: []measure.StatusCount{{Status: "ERROR", Count: 3}}}
	tests := []struct {
		name      string
		elapsed   time.Duration
		total     int64
		rate      float64
		remaining time.Duration
		series    []measure.Summary
		want      string
	}{
		{
			"as in YCSB", 10*time.Second + 900*time.Millisecond, 12345, 1234.5, 2 * time.Minute,
			[]measure.Summary{read, update},
			"2024-01-01 12:00:10:123 10 sec: 12345 operations; 1234.5 current ops/sec; est completion in 2 minutes " +
				"[READ: Count=6000, Max=900, Min=14, Avg=33.88, 50=30, 90=50, 99=86, 99.9=400, 99.99=880] " +
				"[UPDATE: Count=6000, Max=2000, Min=40, Avg=120, 50=100, 99=700]",
		},
		{
			"unknown remaining", 10 * time.Second, 100, 10, -1, []measure.Summary{read},
			"2024-01-01 12:00:10:123 10 sec: 100 operations; 10 current ops/sec; " +
				"[READ: Count=6000, Max=900, Min=14, Avg=33.88, 50=30, 90=50, 99=86, 99.9=400, 99.99=880]",
		},
		{
			"nothing done yet", 0, 0, 0, -1, nil,
			"2024-01-01 12:00:10:123 0 sec: 0 operations;",
		},
		{
			"rate rounded to two decimals", 3 * time.Second, 7, 2.3333333, 1500 * time.Millisecond, []measure.Summary{failed},
			"2024-01-01 12:00:10:123 3 sec: 7 operations; 2.33 current ops/sec; est completion in 2 seconds [INSERT: Count=0, Max=0, Min=0, Avg=0]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StatusLine(now, tt.elapsed, tt.total, tt.rate, tt.remaining, tt.series)
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestStatusLineLocalTime(t *testing.T) {
	// The time is printed in local time, as YCSB does, whatever zone it comes in.
	utc := time.Date(2024, 1, 1, 12, 0, 10, 5e6, time.UTC)
	want := utc.Local().Format("2006-01-02 15:04:05") + ":005 "
	if got := StatusLine(utc, 0, 0, 0, -1, nil); got[:len(want)] != want {
		t.Errorf("got %q, want prefix %q", got, want)
	}
}

func TestRemainingWords(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "0 seconds"},
		{1 * time.Second, "1 second"},
		{100 * time.Millisecond, "1 second"}, // rounded up, as YCSB
		{45 * time.Second, "45 seconds"},
		{60 * time.Second, "1 minute"},
		{61 * time.Second, "1 minute"}, // seconds only below a minute
		{2*time.Minute + 59*time.Second, "2 minutes"},
		{time.Hour, "1 hour"},
		{2*time.Hour + 5*time.Minute + 3*time.Second, "2 hours 5 minutes"},
		{24 * time.Hour, "1 day"},
		{26*time.Hour + 30*time.Minute, "1 day 2 hours"}, // minutes only below a day
		{3*24*time.Hour + 30*time.Minute, "3 days"},
	}
	for _, tt := range tests {
		if got := remainingWords(tt.in); got != tt.want {
			t.Errorf("remainingWords(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func ps(at []float64, micros ...int64) []measure.Percentile {
	out := make([]measure.Percentile, len(at))
	for i := range at {
		out[i] = measure.Percentile{Percentile: at[i], Micros: micros[i]}
	}
	return out
}

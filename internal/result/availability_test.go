package result

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestAvailabilityTextAndJSON(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 1, 0, time.UTC)
	s := sampleSummary("run")
	s.Availability = &Availability{
		Outages: []Outage{
			{Start: start, End: start.Add(5200 * time.Millisecond), Failed: 412},
			{Start: start.Add(20 * time.Second), End: start.Add(21 * time.Second), Failed: 3, Ongoing: true},
		},
		Reconnects: 8,
	}
	var text bytes.Buffer
	if err := WriteText(&text, s); err != nil {
		t.Fatal(err)
	}
	want := "# outage: 2, 6.2 s (5.2 s from 10:00:01.0, 412 operations failed; 1.0 s from 10:00:21.0, 3 operations failed, still down at the end); reconnections: 8\n"
	if !strings.Contains(text.String(), want) {
		t.Fatalf("text lacks %q:\n%s", want, text.String())
	}

	if got := readBack(t, s).Availability; !reflect.DeepEqual(got, s.Availability) {
		t.Fatalf("read back %+v, wrote %+v", got, s.Availability)
	}

	// Nothing to say when every connection held.
	s.Availability = nil
	text.Reset()
	if err := WriteText(&text, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "# outage") {
		t.Fatalf("an outage line without outages:\n%s", text.String())
	}
}

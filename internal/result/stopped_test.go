package result

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

func stoppedSummary() Summary {
	s := sampleSummary("load")
	s.Interrupted, s.Notes = false, nil
	s.Ending = &Ending{By: "error", Text: "stopped after 9000 of 100000 rows"}
	s.Stopped = &Stopped{
		Reason: StopFatal, Cause: "database or disk is full", Code: "13 SQLITE_FULL", Op: "INSERT",
		At:   time.Date(2026, 11, 25, 13, 23, 32, 0, time.UTC),
		Text: "load stopped: ERROR(13 SQLITE_FULL) database or disk is full, after 9,000 of 100,000 rows; the table usertable is incomplete (left as it is)",
	}
	return s
}

// A stop is written to the JSON summary as additive fields of schema
// version 2, read back whole, and shown in the text output.
func TestStoppedIsWrittenAndReadBack(t *testing.T) {
	s := stoppedSummary()
	var buf bytes.Buffer
	if err := NewWriter(&buf).Summary(s); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{`"stopped":{"reason":"fatal","cause":"database or disk is full","code":"13 SQLITE_FULL","op":"INSERT","at":"2026-11-25T13:23:32Z","text":"load stopped: `, `"ended":{"by":"error"`} {
		if !strings.Contains(buf.String(), part) {
			t.Errorf("summary record lacks %s:\n%s", part, buf.String())
		}
	}
	if strings.Contains(buf.String(), `"since"`) {
		t.Errorf("a fatal stop has no since: %s", buf.String())
	}
	if got := readBack(t, s); !reflect.DeepEqual(got.Stopped, s.Stopped) {
		t.Fatalf("read back %+v, wrote %+v", got.Stopped, s.Stopped)
	}

	u := s
	u.Stopped = &Stopped{Reason: StopUnreachable, Cause: "connection refused", Op: "RECONNECT",
		At: time.Date(2026, 11, 25, 13, 24, 32, 0, time.UTC), Since: time.Date(2026, 11, 25, 13, 23, 32, 0, time.UTC), Text: "PostgreSQL at 127.0.0.1:5432 has not answered"}
	if got := readBack(t, u); !reflect.DeepEqual(got.Stopped, u.Stopped) {
		t.Fatalf("read back %+v, wrote %+v", got.Stopped, u.Stopped)
	}

	var text bytes.Buffer
	if err := WriteText(&text, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "\n# stopped: load stopped: ERROR(13 SQLITE_FULL) database or disk is full, after 9,000 of 100,000 rows;") {
		t.Fatalf("text lacks the stop:\n%s", text.String())
	}
}

// A summary written before stops were recorded reads with none.
func TestOldSummaryHasNoStop(t *testing.T) {
	s := sampleSummary("run")
	if got := readBack(t, s); got.Stopped != nil {
		t.Fatalf("stopped %+v in a summary that had none", got.Stopped)
	}
}

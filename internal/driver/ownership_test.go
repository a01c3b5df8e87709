package driver

import (
	"strings"
	"testing"
)

func TestOwnership(t *testing.T) {
	for _, tc := range []struct {
		name  string
		own   Ownership
		owned bool
		note  string // a part of the note; "" for none
	}{
		{"not recorded", Ownership{CurrentIdentity: "16384"}, false, ""},
		{"recorded, same table", Ownership{Recorded: true, RecordedIdentity: "16384", CurrentIdentity: "16384"}, true, ""},
		{"recorded, table gone", Ownership{Recorded: true, RecordedIdentity: "16384"}, false, ""},
		{"recorded, another table", Ownership{Recorded: true, RecordedIdentity: "16384", CurrentIdentity: "16399"}, false, "not the one dbprobe created"},
		{"recorded, another table or rebuilt", Ownership{Recorded: true, RecordedIdentity: "2 x", CurrentIdentity: "5 x", RebuiltBy: "VACUUM"}, false, "or VACUUM rebuilt it"},
		{"recorded by name only", Ownership{Recorded: true, CurrentIdentity: "16384"}, false, "without the table's identity"},
		{"recorded by name only, table gone", Ownership{Recorded: true}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.own.Marker = "dbprobe_tables"
			if got := tc.own.Owned(); got != tc.owned {
				t.Errorf("Owned() = %v, want %v", got, tc.owned)
			}
			note := tc.own.Note()
			if (note == "") != (tc.note == "") || !strings.Contains(note, tc.note) {
				t.Errorf("Note() = %q, want one holding %q", note, tc.note)
			}
			if note != "" && (!strings.Contains(note, "dbprobe_tables") || !strings.Contains(note, "drop it yourself")) {
				t.Errorf("Note() = %q: want it to name the marker table and say what to do", note)
			}
		})
	}
}

package redis

import (
	"testing"

	"github.com/dbprobe/dbprobe/internal/driver"
)

func TestSettingText(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"maxmemory", "0", "0 (no limit)"},
		{"maxmemory", "1073741824", "1073741824 (1024.0 MiB)"},
		{"maxmemory", "3gb", "3gb"}, // not a number: shown as the server gave it
		{"save", "", `""`},
		{"appendfsync", "everysec", "everysec"},
	} {
		if got := settingText(tc.name, tc.value); got != tc.want {
			t.Errorf("settingText(%s, %q) = %q, want %q", tc.name, tc.value, got, tc.want)
		}
	}
}

func TestAutocommitText(t *testing.T) {
	for bulk, want := range map[bool]string{
		true:  "no transactions: every operation is one command or one script, applied as it runs; a load batch is all or nothing (one script)",
		false: "no transactions: every operation is one command or one script, applied as it runs; a load batch is all or nothing (WATCH, MULTI, the records' writes, EXEC)",
	} {
		if got := autocommitText(driver.Options{BulkLoad: bulk}); got != want {
			t.Errorf("bulk %v: %q, want %q", bulk, got, want)
		}
	}
}

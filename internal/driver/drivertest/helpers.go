package drivertest

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// The helpers below are what every driver's own tests need besides the
// suite: a YCSB-shaped table, a DB opened through the registry as the
// command opens it, a session closed at the end of the test, and field
// values that name their key and field.

// Table returns the YCSB table shape with n fields FIELD0…FIELDn-1, keys
// of up to 255 bytes and fields of 100.
func Table(name string, n int) driver.Table {
	fields := make([]string, n)
	for i := range fields {
		fields[i] = fmt.Sprintf("FIELD%d", i)
	}
	return driver.Table{Name: name, KeyColumn: "YCSB_KEY", KeyLength: keyLength, Fields: fields, FieldLength: fieldLength}
}

// OpenURL opens rawURL through the registry, as the command does, within
// a minute. A URL that does not parse or names no registered driver fails
// the test; Open's own error is returned for the test to judge.
func OpenURL(t testing.TB, rawURL, password string, opts driver.Options) (driver.DB, error) {
	t.Helper()
	target, err := driver.ParseTarget(rawURL, password)
	if err != nil {
		t.Fatalf("ParseTarget: %v", err)
	}
	d, _, err := driver.Lookup(target.Driver)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return d.Open(ctx, target, opts)
}

// MustOpen opens rawURL, failing the test if it cannot, and closes it when
// the test ends.
func MustOpen(t testing.TB, rawURL string, opts driver.Options) driver.DB {
	t.Helper()
	db, err := OpenURL(t, rawURL, "", opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Session opens a session on tbl and closes it when the test ends; a test
// may close it earlier itself.
func Session(t testing.TB, db driver.DB, tbl driver.Table) driver.Session {
	t.Helper()
	s, err := db.Session(context.Background(), tbl)
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Values returns n field values for key, each naming its key and field
// ("key-f0", "key-f1", …), so that a value read from the wrong record or
// field shows.
func Values(key string, n int) [][]byte {
	v := make([][]byte, n)
	for i := range v {
		v[i] = fmt.Appendf(nil, "%s-f%d", key, i)
	}
	return v
}

var operationsLine = regexp.MustCompile(`(?m)^\[([A-Z-]+)\], Operations, (\d+)$`)

// Operations sums the Operations lines of a phase's YCSB text output but
// CLEANUP's, and reports whether any operation failed (a -FAILED series or
// a Return=ERROR line), for tests that run dbprobe as a user would.
func Operations(out string) (ops int, failed bool) {
	for _, m := range operationsLine.FindAllStringSubmatch(out, -1) {
		if strings.HasSuffix(m[1], "-FAILED") {
			failed = true
		}
		if m[1] == "CLEANUP" {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		ops += n
	}
	return ops, failed || strings.Contains(out, "Return=ERROR")
}

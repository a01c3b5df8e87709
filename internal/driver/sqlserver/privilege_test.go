package sqlserver

import (
	"strconv"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/dbprobe/dbprobe/internal/badinput"
	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

// A statement refused for a missing permission is bad input that still
// counts under its number; other errors are not bad input.
func TestPermissionDeniedIsBadInput(t *testing.T) {
	for _, n := range []int32{229, 230} {
		err := classify(mssql.Error{Number: n, Message: "The UPDATE permission was denied on the object 'usertable'"})
		if !badinput.Is(err) || dbdriver.Code(err) != strconv.Itoa(int(n)) {
			t.Fatalf("error %d: %v (code %q), want bad input with its number as code", n, err, dbdriver.Code(err))
		}
	}
	if err := classify(mssql.Error{Number: 2627, Message: "duplicate"}); badinput.Is(err) {
		t.Fatalf("a duplicate key is bad input: %v", err)
	}
}

package redis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// replyError is an error reply as redigo hands it over.
type replyError = redis.Error

func TestClassify(t *testing.T) {
	timeoutErr := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	for _, tc := range []struct {
		name  string
		err   error
		code  string
		class driver.Class
	}{
		{"duplicate from our script", replyError("EXISTS the record already exists"), "EXISTS", driver.ClassOther},
		{"wrong type", replyError("WRONGTYPE Operation against a key holding the wrong kind of value script: 1234, on @user_script:1."), "WRONGTYPE", driver.ClassOther},
		{"busy script", replyError("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."), "BUSY", driver.ClassBusy},
		{"loading", replyError("LOADING Redis is loading the dataset in memory"), "LOADING", driver.ClassBusy},
		{"try again", replyError("TRYAGAIN Multiple keys request during rehashing of slot"), "TRYAGAIN", driver.ClassBusy},
		{"out of memory", replyError("OOM command not allowed when used memory > 'maxmemory'."), "OOM", driver.ClassFatal},
		{"replica", replyError("READONLY You can't write against a read only replica."), "READONLY", driver.ClassFatal},
		{"failed save", replyError("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk."), "MISCONF", driver.ClassFatal},
		{"acl", replyError("NOPERM this user has no permissions to run the 'set' command"), "NOPERM", driver.ClassFatal},
		{"wrapped reply", fmt.Errorf("redis: key %q: %w", "k", replyError("BUSY Redis is busy")), "BUSY", driver.ClassBusy},
		{"watch abort", errWatchAborted, codeWatch, driver.ClassConflict},
		{"pool timeout", errPoolTimeout, codePoolTimeout, driver.ClassTimeout},
		{"deadline", context.DeadlineExceeded, codeTimeout, driver.ClassTimeout},
		{"wrapped deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), codeTimeout, driver.ClassTimeout},
		{"socket timeout", timeoutErr, codeTimeout, driver.ClassTimeout},
		{"canceled", context.Canceled, codeCanceled, driver.ClassOther},
		{"closed DB", errClosed, codeConnLost, driver.ClassConnLost},
		{"eof", io.EOF, codeConnLost, driver.ClassConnLost},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, codeConnLost, driver.ClassConnLost},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, codeConnLost, driver.ClassConnLost},
		{"no upper-case code", replyError("redis: something odd"), "", driver.ClassOther},
		{"nil reply", redis.ErrNil, "", driver.ClassOther},
		{"plain", errors.New("odd"), "", driver.ClassOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := classify(tc.err)
			if driver.Code(err) != tc.code || driver.ClassOf(err) != tc.class {
				t.Errorf("classify(%v) = code %q, class %v; want %q, %v", tc.err, driver.Code(err), driver.ClassOf(err), tc.code, tc.class)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("classify(%v) hides the cause", tc.err)
			}
			// The code is Redis's own word for the error: no name besides.
			if driver.Label(err) != tc.code {
				t.Errorf("Label = %q, want %q alone", driver.Label(err), tc.code)
			}
		})
	}
	if classify(nil) != nil || classify(driver.ErrNotFound) != driver.ErrNotFound {
		t.Error("classify must pass nil and ErrNotFound unchanged")
	}
	// Classified once: a second pass keeps the first code.
	first := driver.Classify(errors.New("dup"), codeExists, driver.ClassOther)
	if got := classify(fmt.Errorf("batch: %w", first)); driver.Code(got) != codeExists {
		t.Errorf("reclassified: code %q, want %q", driver.Code(got), codeExists)
	}
}

package driver

import (
	"errors"
	"fmt"
)

// Class is what kind of failure an operation met; the runner's policy on
// retries and reconnection depends only on it.
type Class int

// The error classes.
const (
	// ClassOther is any failure not classified below; never retried.
	ClassOther Class = iota
	// ClassConflict is a serialization failure or deadlock: safe to retry.
	ClassConflict
	// ClassTimeout is an operation that ran out of time.
	ClassTimeout
	// ClassConnLost is a connection that broke under the operation.
	ClassConnLost
	// ClassBusy is a lock the database could not take in time (SQLite BUSY).
	ClassBusy
	// ClassTransient is a failure the database service reports as
	// passing: a failover or reconfiguration under way, a service that
	// sheds load for a moment (Azure SQL's 40613, 40197, 40501). The
	// driver has let go of the connection it happened on, so a repeat
	// runs on a new one; retried like a conflict.
	ClassTransient
	// ClassFatal is a failure that more attempts cannot fix until someone
	// acts: a disk or log full, a database that is read-only, a quota
	// spent, a permission revoked. Never retried; by default it stops the
	// phase at once (the runner's OnError).
	ClassFatal
)

var classNames = [...]string{"other", "conflict", "timeout", "connection-lost", "busy", "transient", "fatal"}

// String returns the class name used in results.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// ErrNotFound is returned when a read, update or delete finds no row.
var ErrNotFound = errors.New("record not found")

// Error is a classified database error with the database's own code.
type Error struct {
	// Code is the database's error code as text: a SQLSTATE, an errno.
	Code string
	// Name is the code's meaning in the database's own words, one token:
	// "disk_full" (PostgreSQL's condition name), "SQLITE_FULL",
	// "ER_RECORD_FILE_FULL"; "" when the driver knows none.
	Name  string
	Class Class
	Err   error
}

// Error returns the underlying message.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Classify wraps err with its code and class; nil stays nil.
func Classify(err error, code string, class Class) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Class: class, Err: err}
}

// ClassifyNamed is Classify with the code's name (Error.Name).
func ClassifyNamed(err error, code, name string, class Class) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Name: name, Class: class, Err: err}
}

// ClassOf returns the class of err: ClassOther when it is not classified.
func ClassOf(err error) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ClassOther
}

// Code returns the database's error code carried by err, or "" when none.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Label returns the code and its name as results show them, the code
// first so that parsers matching the code still match: "53100 disk_full",
// "13 SQLITE_FULL", or the code alone when it has no name; "" when err
// carries no code.
func Label(err error) string {
	var e *Error
	if !errors.As(err, &e) || e.Code == "" {
		return ""
	}
	if e.Name == "" {
		return e.Code
	}
	return e.Code + " " + e.Name
}

// IsFatal reports whether err is a failure more attempts cannot fix.
func IsFatal(err error) bool { return ClassOf(err) == ClassFatal }

// IsRetryable reports whether repeating the whole transaction may succeed:
// a conflict, a busy lock or a transient failure of the service. Unique
// violations and other errors are not.
func IsRetryable(err error) bool {
	c := ClassOf(err)
	return c == ClassConflict || c == ClassBusy || c == ClassTransient
}

// IsConnLost reports whether the connection broke under the operation.
func IsConnLost(err error) bool { return ClassOf(err) == ClassConnLost }

// IsTimeout reports whether the operation ran out of time.
func IsTimeout(err error) bool { return ClassOf(err) == ClassTimeout }

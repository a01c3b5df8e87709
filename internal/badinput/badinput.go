// Package badinput marks errors that are the user's to fix: a malformed URL,
// an unknown property, a wrong password, a missing table. The command maps
// them to exit code 2 and prints their one-line message without a stack.
package badinput

import (
	"errors"
	"fmt"
)

// Error is a problem with what the user asked for, with what to do about it.
type Error struct {
	msg string
	err error
}

// Error returns the one-line message.
func (e *Error) Error() string { return e.msg }

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.err }

// New returns a bad-input error with a formatted message. When an argument
// is an error wrapped with %w it stays reachable through errors.Is and As.
func New(format string, args ...any) error {
	wrapped := fmt.Errorf(format, args...)
	return &Error{msg: wrapped.Error(), err: errors.Unwrap(wrapped)}
}

// Is reports whether err, or anything it wraps, is bad input.
func Is(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

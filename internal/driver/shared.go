package driver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
)

// Scrubbed is an error whose message a driver settled (reworded,
// shortened, or a library's message checked with Target.Scrub) while its
// cause stays reachable with errors.Is and errors.As.
type Scrubbed struct {
	Msg string
	Err error
	// Unchecked marks a Msg that quotes a library's words unchecked for
	// the password, by code that has no Target (an error's classification
	// sees none): Target.ScrubError checks it.
	Unchecked bool
}

// Error returns the cleaned message.
func (e *Scrubbed) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Scrubbed) Unwrap() error { return e.Err }

// IsNetworkError reports an error of a network connection that broke, was
// closed or timed out at the socket: what every driver classifies as a
// lost connection, besides its library's own sentinels.
func IsNetworkError(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}

// CheckBatch checks that an InsertBatch call has one record of fields
// values per key; driver names the caller in the error.
func CheckBatch(driver string, keys [][]byte, values [][][]byte, fields int) error {
	if len(keys) != len(values) {
		return fmt.Errorf("%s: batch of %d keys and %d records", driver, len(keys), len(values))
	}
	for i, v := range values {
		if len(v) != fields {
			return fmt.Errorf("%s: record %d has %d values for %d fields", driver, i, len(v), fields)
		}
	}
	return nil
}

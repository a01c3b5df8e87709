// Package driver is the one interface every database sits behind. Nothing
// above this layer knows a dialect: the runner asks a Session to read,
// update, insert, scan or delete a record, and classifies what went wrong
// with the predicates here (IsRetryable, IsConnLost, IsTimeout), never by
// looking at a driver's own error types.
//
// Drivers register themselves by URL scheme in init(), the way database/sql
// drivers do; internal/driver/all holds the blank imports so that no backend
// is silently left out of the build.
package driver

// Package replica is what sending reads to a replica (--read-db) adds to
// a key-value run: the version stamps updates carry and the tracker that
// counts stale reads from them (tracker.go), and the heartbeat that
// measures the replica's lag (heartbeat.go). It names no database: the
// SQL behind a role and a heartbeat is each driver's
// (driver.Replicated).
//
// A stale read is counted only where it is proven. Every update and
// insert of the run writes a stamp (Stamp) into the first bytes of each
// field it sets: the run's random epoch and a version taken from one
// counter under the key's lock. An update is clean when no other update
// of its key was in flight as it took its version: every lower version of
// the key had then been answered, so the clean one committed after all of
// them. The tracker remembers per key the highest clean version the
// primary acknowledged. A read from the replica that starts after that
// acknowledgement and returns only lower versions in the fields that
// update wrote (or no row at all) returned what the primary had already
// replaced: stale. Updates that overlapped on a key are never used to
// judge, so they can hide a stale read but never invent one.
//
// Memory: the tracker keeps only keys whose write of the run was
// acknowledged, in sharded maps, 38 bytes each (bytesPerKey);
// KeysTracked and TrackedBytes report what that took.
package replica

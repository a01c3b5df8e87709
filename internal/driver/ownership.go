package driver

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// A table is dbprobe's only when the marker table names it and the identity
// recorded there when dbprobe created it (an OID, an object id and creation
// date, a creation time, a root page) is the identity of the table that
// exists now: a name alone does not say whether someone dropped dbprobe's
// table and created their own under that name since.

// Ownership is what a driver read about a table from its marker table and
// its catalog.
type Ownership struct {
	// Marker is the marker table's name, as the messages show it.
	Marker string
	// Recorded is whether the marker table names the table.
	Recorded bool
	// RecordedIdentity is the identity the marker row holds: "" for a row
	// an earlier dbprobe wrote, before identities were recorded.
	RecordedIdentity string
	// CurrentIdentity is the identity of the table there now: "" when
	// there is none.
	CurrentIdentity string
	// RebuiltBy names what else gives a table a new identity on this
	// database (VACUUM, OPTIMIZE TABLE), for the note: the table may then
	// be dbprobe's after all.
	RebuiltBy string
}

// Owned reports whether the table there now is the one dbprobe recorded
// creating.
func (o Ownership) Owned() bool {
	return o.Recorded && o.RecordedIdentity != "" && o.RecordedIdentity == o.CurrentIdentity
}

// Note says, for a table the marker table names that is not counted as
// dbprobe's, why, and what the user can do; it is "" otherwise.
func (o Ownership) Note() string {
	switch {
	case !o.Recorded || o.Owned() || o.CurrentIdentity == "":
		return ""
	case o.RecordedIdentity == "":
		return o.Marker + " lists it without the table's identity (an earlier dbprobe recorded it by name only), " +
			"and a name is no proof that this is the table dbprobe created; if it is, drop it yourself and load again"
	case o.RebuiltBy == "":
		return o.Marker + " lists it, but the table there now is not the one dbprobe created " +
			"(it was dropped and created again since); drop it yourself if it should go, or use another table with -p table=NAME"
	default:
		return o.Marker + " lists it, but the table there now is not the one dbprobe recorded creating " +
			"(it was dropped and created again since, or " + o.RebuiltBy + " rebuilt it); if it is dbprobe's, drop it yourself and load again, or use another table with -p table=NAME"
	}
}

// NewTableID returns a random id that a driver puts into a new table's
// definition (a MySQL COMMENT, a comment in SQLite's CREATE statement)
// where the catalog has no identity of its own that a recreated table
// would not share.
func NewTableID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("a random id for the table: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

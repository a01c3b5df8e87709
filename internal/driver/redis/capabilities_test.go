package redis

import (
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Redis has none of the SQL capabilities, and says why in one line an
// experiment can print as it refuses.
func TestCapabilitiesSayWhyNot(t *testing.T) {
	db := &DB{}
	if err := driver.CheckDescription(db); err != nil {
		t.Fatal(err)
	}
	for _, cap := range driver.AllCapabilities() {
		if db.Capabilities().OK(cap) {
			t.Errorf("Redis claims %s", cap)
		}
	}
	err := db.Capabilities().Need(driver.CapFill)
	if !badinput.Is(err) || err.Error() != "Redis has no server-side table fill: Redis is a key-value store without SQL or tables; use a SQL database (sqlite, postgres, mysql, sqlserver)" {
		t.Errorf("Need(fill) = %v", err)
	}
}

package sqltext

import (
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
)

func TestScript(t *testing.T) {
	got, err := Script(sqlgen.MySQL, "DELIMITER //\nSELECT 1; SELECT 2//\nDELIMITER ;\n\nSELECT 3;")
	want := []driver.ScriptStatement{{Text: "SELECT 1; SELECT 2", Line: 2}, {Text: "SELECT 3", Line: 5}}
	if err != nil || len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Script = %+v, %v; want %+v", got, err, want)
	}
	_, err = Script(sqlgen.SQLite, "SELECT 1;\nSELECT 'a")
	if !badinput.Is(err) || err.Error() != "SQLite script: a string opened on line 2 is not closed" {
		t.Errorf("Script of an open string = %v", err)
	}
}

package experiment

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// faultQueryTimeout bounds what is asked of the database around a fault
// (its connection room, its data directory): the answer helps a message,
// and no message is worth a long wait.
const faultQueryTimeout = 5 * time.Second

// Local reports whether the database's files are on this machine, where
// dbprobe can look at their file system: an embedded database, or a
// server on a loopback address or a Unix socket.
func Local(db driver.DB, target driver.Target) bool {
	return db.Info().Placement != driver.PlacementNone && hostIsTheDatabases(db, target)
}

// Where names the database for a message, by its driver and its address,
// never its password: "PostgreSQL at 127.0.0.1:5432", "sqlite".
func Where(db driver.DB, target driver.Target) string {
	name := db.Info().Product
	if name == "" {
		name = db.Info().Driver
	}
	if name == "" {
		name = target.Driver
	}
	u := target.URL
	if db.Info().Placement != driver.PlacementServer || u == nil {
		return name
	}
	host := u.Host
	if host == "" {
		// A Unix socket given as a host parameter.
		if h := u.Query().Get("host"); h != "" {
			host = h
		}
	}
	if host == "" {
		return name
	}
	return name + " at " + host
}

// DataDirectory returns the directory that holds the database's data when
// the database is on this machine and says where that is (a
// driver.DataLocator), "" otherwise. Ask it before a phase: after a fault
// the server may not answer any more.
func DataDirectory(ctx context.Context, db driver.DB, target driver.Target) string {
	loc, ok := db.(driver.DataLocator)
	if !ok || !Local(db, target) {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, faultQueryTimeout)
	defer cancel()
	dir, err := loc.DataDirectory(ctx)
	if err != nil {
		return ""
	}
	return dir
}

// LogDirectory returns the directory that holds the database's
// transaction log when the database runs on this machine and says where
// it is (driver.LogLocator); "" otherwise.
func LogDirectory(ctx context.Context, db driver.DB, target driver.Target) string {
	loc, ok := db.(driver.LogLocator)
	if !ok || !Local(db, target) {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, faultQueryTimeout)
	defer cancel()
	dir, err := loc.LogDirectory(ctx)
	if err != nil {
		return ""
	}
	return dir
}

// MonitorConnections is how many connections of its own the monitor
// opens on db during a phase: one to sample a database that can be
// monitored, none when it is off.
func MonitorConnections(c MonitorConfig, db driver.DB) int {
	if _, ok := db.(driver.Monitorable); ok && !c.Off {
		return 1
	}
	return 0
}

// CheckConnections refuses, before a phase, a phase that needs more
// connections than the server accepts now (when the database can say,
// driver.ConnectionLimiter): sessions for the workers and extra for the
// monitor, asked for by what (e.g. "--threads 200"), and how to ask for
// fewer (e.g. "lower --threads"). The connections dbprobe holds already
// are in the server's count of those in use. A server that cannot say is
// let through: the phase's own failures will tell.
func CheckConnections(ctx context.Context, db driver.DB, target driver.Target, what, fewer string, sessions, extra int) error {
	lim, ok := db.(driver.ConnectionLimiter)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, faultQueryTimeout)
	defer cancel()
	room, err := lim.ConnectionRoom(ctx)
	if err != nil || room.Max <= 0 {
		return nil
	}
	need := sessions + extra
	if need <= room.Free() {
		return nil
	}
	setting := room.Setting
	if setting == "" {
		setting = "the server's connection limit"
	}
	limit := room.Limit
	if limit == "" {
		limit = fmt.Sprintf("%s %d", setting, room.Max)
	}
	return badinput.New("%s needs %d connections, but %s accepts %d more (%s, %d in use); %s or raise %s",
		what, need, Where(db, target), room.Free(), limit, room.InUse, fewer, setting)
}

// SpaceNote says, for a fault on a database on this machine, where its
// data directory dir is and how much room its file system has now:
// "/var/lib/pg on /mnt/small (ext4) has 0 B free now"; low says it is all
// but full. It is "" when dir is "" or its file system cannot be read.
func SpaceNote(dir string) (note string, low bool) {
	if dir == "" {
		return "", false
	}
	fs, err := FileSystemOf(dir)
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("%s on %s (%s) has %s free now", dir, fs.Mount, fs.Type, BytesText(fs.Free)), fs.LowOnSpace()
}

// LooksFull reports whether a failure's code and name say that a disk or
// a log is full (53100 disk_full, 13 SQLITE_FULL, 1114
// ER_RECORD_FILE_FULL, 9002 log full): the database's own words, read
// without naming any database.
func LooksFull(label, message string) bool {
	l := strings.ToLower(label + " " + message)
	return strings.Contains(l, "full") || strings.Contains(l, "no space")
}

// FaultAdvice says what to do about a fatal failure that is not a full
// disk, from the failure's code, name and message: the words databases use
// for a read-only database, a refused permission or a spent quota, read
// without naming any database. "" when it says none of them.
func FaultAdvice(label, message string) string {
	l := strings.ToLower(label + " " + message)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(l, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("read-only", "read_only", "readonly", "read only"):
		return "the database or the session is read-only (a standby, a read-only setting or mode): point --db at a writable primary or lift the setting"
	case has("permission", "privilege", "denied", "noperm", "not authorized", "_auth"):
		return "grant the user what the operation needs"
	case has("quota", "oom", "memory", "resource limit"):
		return "a quota or memory limit is spent: raise the limit or the tier, or free what holds it"
	}
	return ""
}

// SecondsText says a wait in whole seconds when it is one ("60 s"), else
// to the tenth ("0.2 s").
func SecondsText(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + " s"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

package postgres

import (
	"context"
	"crypto/tls"
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/drivertest"
	"github.com/dbprobe/dbprobe/internal/rawnet"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// rawSocket reports whether a session's connection reads and writes
// through rawnet.
func rawSocket(t *testing.T, s driver.Session) bool {
	t.Helper()
	c := s.(*session).c.conn
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	switch c.(type) {
	case *rawnet.Conn:
		return true
	case *net.TCPConn, *net.UnixConn:
		return false
	}
	t.Fatalf("the session's connection is a %T", c)
	return false
}

// Under DBPROBE_RAWNET=off the sessions' sockets are package net's own,
// and the conformance suite (loads through COPY, reads, updates, scans,
// cancellation) passes on them; under on they are rawnet's. Any other
// value is refused before connecting.
func TestRawnetSwitch(t *testing.T) {
	u := testdb.FreshPostgresDatabase(t)
	for _, mode := range []string{"off", "on"} {
		t.Run(mode, func(t *testing.T) {
			t.Setenv(rawnet.EnvVar, mode)
			if mode == "off" {
				drivertest.Run(t, drivertest.Config{
					Open: func(t *testing.T, opts driver.Options) driver.DB {
						return drivertest.MustOpen(t, u, opts)
					},
				})
			}
			db := drivertest.MustOpen(t, u, driver.Options{Sessions: 1})
			tbl := drivertest.Table("rawnet_"+mode, 2)
			ctx := context.Background()
			if err := db.CreateTable(ctx, tbl); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.DropTable(ctx, tbl) })
			s := drivertest.Session(t, db, tbl)
			if err := s.Insert(ctx, []byte("k"), [][]byte{[]byte("a"), []byte("b")}); err != nil {
				t.Fatal(err)
			}
			if got, want := rawSocket(t, s), mode == "on" && runtime.GOOS == "linux"; got != want {
				t.Errorf("DBPROBE_RAWNET=%s: the socket is rawnet's: %v, want %v", mode, got, want)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		t.Setenv(rawnet.EnvVar, "no")
		db, err := drivertest.OpenURL(t, u, "", driver.Options{Sessions: 1})
		if err == nil {
			db.Close()
			t.Fatal("Open under DBPROBE_RAWNET=no succeeded")
		}
		if !badinput.Is(err) || !strings.Contains(err.Error(), "DBPROBE_RAWNET") {
			t.Errorf("Open under DBPROBE_RAWNET=no: %v, want bad input naming DBPROBE_RAWNET", err)
		}
	})
}

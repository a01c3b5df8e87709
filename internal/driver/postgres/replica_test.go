package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// The replica capability's SQL, as PostgreSQL is given it.
func TestReplicaSQL(t *testing.T) {
	table := qualify("public", "dbprobe_heartbeat_0a1b2c3d")
	var b strings.Builder
	for _, s := range []string{roleSQL, heartbeatCreateSQL(table), heartbeatInsertSQL(table), heartbeatWriteSQL(table), heartbeatReadSQL(table), heartbeatListSQL} {
		b.WriteString(s)
		b.WriteString(";\n")
	}
	golden(t, "replica.golden.sql", b.String())
}

var _ driver.Replicated = (*DB)(nil)

// On a primary and its streaming standby (scripts/with-replica, or
// scripts/test): the roles, and a heartbeat written on one and read on
// the other, created and dropped as dbprobe's.
func TestReplicaRoleAndHeartbeat(t *testing.T) {
	primaryURL, replicaURL := testdb.PostgresReplicaPair(t)
	p, admin := capDBAt(t, primaryURL)
	r, _ := capDBAt(t, replicaURL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	pr, err := p.Role(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := r.Role(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Replica || !rr.Replica || pr.Identity == "" || rr.Upstream != pr.Identity || pr.Instance == rr.Instance {
		t.Fatalf("primary %+v, standby %+v: want the standby replaying the primary's system identifier, and two instances", pr, rr)
	}
	again, _ := capDBAt(t, primaryURL)
	if pr2, err := again.Role(ctx); err != nil || pr2.Instance != pr.Instance {
		t.Fatalf("the primary through a second DB: %+v, %v; want instance %s", pr2, err, pr.Instance)
	}

	const name = "dbprobe_heartbeat_test01"
	if _, found, err := r.ReadHeartbeat(ctx, name); err != nil || found {
		t.Fatalf("before creation: found %v, %v; want not found and no error", found, err)
	}
	if err := p.CreateHeartbeat(ctx, name); err != nil {
		t.Fatal(err)
	}
	if n := count(t, admin, "SELECT count(*) FROM dbprobe_tables WHERE table_name = $1", name); n != 1 {
		t.Fatalf("the heartbeat table is recorded %d times in dbprobe_tables, want 1", n)
	}
	if names, err := p.HeartbeatTables(ctx, "dbprobe_heartbeat_"); err != nil || len(names) != 1 || names[0] != name {
		t.Fatalf("HeartbeatTables: %v, %v; want [%s]", names, err, name)
	}
	if err := p.WriteHeartbeat(ctx, name, 42); err != nil {
		t.Fatal(err)
	}
	for {
		seq, found, err := r.ReadHeartbeat(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if found && seq == 42 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the standby never showed heartbeat 42 (last %d, found %v)", seq, found)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.DropHeartbeat(ctx, name); err != nil {
		t.Fatal(err)
	}
	if n := count(t, admin, "SELECT count(*) FROM pg_class WHERE relname = $1", name); n != 0 {
		t.Fatalf("the heartbeat table is still there after DropHeartbeat")
	}

	// A table dbprobe did not create under a heartbeat's name is never
	// dropped.
	if _, err := admin.Exec(ctx, "CREATE TABLE "+name+" (id int)"); err != nil {
		t.Fatal(err)
	}
	if err := p.DropHeartbeat(ctx, name); err == nil || !badinput.Is(err) {
		t.Fatalf("DropHeartbeat of someone else's table: %v, want a refusal", err)
	}
	if n := count(t, admin, "SELECT count(*) FROM pg_class WHERE relname = $1", name); n != 1 {
		t.Fatalf("someone else's table was dropped")
	}
	if err := p.CreateHeartbeat(ctx, "bad name;"); err == nil || !badinput.Is(err) {
		t.Fatalf("CreateHeartbeat of a name that is not an identifier: %v", err)
	}
}

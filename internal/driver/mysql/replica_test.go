package mysql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

var _ driver.Replicated = (*DB)(nil)

// The replica capability's SQL, as MySQL and MariaDB are given it.
func TestReplicaSQL(t *testing.T) {
	table := quote("dbprobe_heartbeat_0a1b2c3d4e")
	var b strings.Builder
	for _, s := range []string{roleSQL, replicaStatusSQL, slaveStatusSQL, heartbeatCreateSQL(table), heartbeatInsertSQL(table),
		heartbeatWriteSQL(table), heartbeatReadSQL(table), heartbeatListSQL} {
		b.WriteString(s)
		b.WriteString(";\n")
	}
	golden(t, "replica.sql", b.String())
}

// SHOW REPLICA STATUS as MySQL 8.0.22+ and MariaDB (and SHOW SLAVE
// STATUS before them) name its columns.
func TestReplicaRole(t *testing.T) {
	cases := []struct {
		name     string
		rows     []map[string]string
		replica  bool
		upstream string
		evidence string
	}{
		{"no row", nil, false, "", "returns no row"},
		{"MySQL 8", []map[string]string{{"Source_Host": "10.0.0.1", "Source_Port": "3306", "Source_Server_Id": "11", "Replica_IO_Running": "Yes", "Replica_SQL_Running": "Yes"}},
			true, "11", "replicating from 10.0.0.1:3306, server_id 11; I/O thread yes, SQL thread yes"},
		{"MariaDB and older MySQL", []map[string]string{{"Master_Host": "db1", "Master_Port": "3307", "Master_Server_Id": "7", "Slave_IO_Running": "Yes", "Slave_SQL_Running": "No"}},
			true, "7", "replicating from db1:3307, server_id 7; I/O thread yes, SQL thread no"},
		{"multi-source", []map[string]string{{"Master_Server_Id": "1"}, {"Master_Server_Id": "2"}}, true, "", "returns 2 sources"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			replica, upstream, evidence := replicaRole(c.rows)
			if replica != c.replica || upstream != c.upstream || !strings.Contains(evidence, c.evidence) {
				t.Errorf("got %v %q %q, want %v %q and evidence with %q", replica, upstream, evidence, c.replica, c.upstream, c.evidence)
			}
		})
	}
}

// On the throwaway MariaDB, a server that replicates from no one: its
// role, and a heartbeat created, written, read, listed and dropped.
func TestReplicaHeartbeatOnServer(t *testing.T) {
	u := testdb.FreshMySQLDatabase(t)
	target, err := driver.ParseTarget(u, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := Driver{}.Open(ctx, target, driver.Options{Sessions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	db := d.(*DB)
	r, err := db.Role(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Replica || r.Identity == "" || r.Instance == "" || !strings.Contains(r.Evidence, "no row") {
		t.Fatalf("role %+v: want a server that replicates from no one", r)
	}
	const name = "dbprobe_heartbeat_test000001"
	if _, found, err := db.ReadHeartbeat(ctx, name); err != nil || found {
		t.Fatalf("before creation: %v %v", found, err)
	}
	if err := db.CreateHeartbeat(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := db.WriteHeartbeat(ctx, name, 7); err != nil {
		t.Fatal(err)
	}
	if seq, found, err := db.ReadHeartbeat(ctx, name); err != nil || !found || seq != 7 {
		t.Fatalf("read back %d %v %v, want 7", seq, found, err)
	}
	if names, err := db.HeartbeatTables(ctx, "dbprobe_heartbeat_"); err != nil || len(names) != 1 || names[0] != name {
		t.Fatalf("HeartbeatTables: %v %v", names, err)
	}
	if err := db.DropHeartbeat(ctx, name); err != nil {
		t.Fatal(err)
	}
	if names, err := db.HeartbeatTables(ctx, "dbprobe_heartbeat_"); err != nil || len(names) != 0 {
		t.Fatalf("after the drop: %v %v", names, err)
	}
	// Someone else's table under a heartbeat's name is never dropped.
	if _, err := db.pool.ExecContext(ctx, "CREATE TABLE "+name+" (id INT)"); err != nil {
		t.Fatal(err)
	}
	if err := db.DropHeartbeat(ctx, name); err == nil || !badinput.Is(err) {
		t.Fatalf("DropHeartbeat of someone else's table: %v", err)
	}
}

package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// The replica capability (driver.Replicated). A MySQL or MariaDB replica
// is a server that SHOW REPLICA STATUS (SHOW SLAVE STATUS before MySQL
// 8.0.22 and MariaDB 10.5.1) returns a row on; the source it replicates
// is named there by its server_id (Source_Server_Id, Master_Server_Id).
// Two URLs reach one server when server_id, host name and port agree.

// erNoSuchTable is ER_NO_SUCH_TABLE: a replica that has not yet applied
// the heartbeat table's creation.
const erNoSuchTable = 1146

// roleSQL reads what tells the server from others.
const roleSQL = "SELECT @@server_id, @@hostname, @@port"

// The replica status statements, newest spelling first.
const (
	replicaStatusSQL = "SHOW REPLICA STATUS"
	slaveStatusSQL   = "SHOW SLAVE STATUS"
)

// heartbeatCreateSQL creates the heartbeat table: one row, its sequence
// and the source's clock when it was written. InnoDB, so that it is
// replicated with the transactions around it.
func heartbeatCreateSQL(table string) string {
	return "CREATE TABLE " + table + " (id INT NOT NULL PRIMARY KEY, seq BIGINT NOT NULL, written_at DATETIME(6) NOT NULL) ENGINE=InnoDB"
}

// heartbeatInsertSQL adds the table's one row at sequence 0.
func heartbeatInsertSQL(table string) string {
	return "INSERT INTO " + table + " (id, seq, written_at) VALUES (1, 0, NOW(6))"
}

// heartbeatWriteSQL sets the row's sequence (?).
func heartbeatWriteSQL(table string) string {
	return "UPDATE " + table + " SET seq = ?, written_at = NOW(6) WHERE id = 1"
}

// heartbeatReadSQL reads the row's sequence.
func heartbeatReadSQL(table string) string {
	return "SELECT seq FROM " + table + " WHERE id = 1"
}

// heartbeatListSQL lists the tables of the current database whose names
// start with the first parameter, whose length is the second.
const heartbeatListSQL = "SELECT CAST(table_name AS CHAR) FROM information_schema.tables" +
	" WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' AND LEFT(table_name, ?) = ? ORDER BY 1"

// heartbeatTable is the heartbeat table's quoted name, checked to be a
// plain identifier.
func (db *DB) heartbeatTable(name string) (string, error) {
	if err := driver.CheckIdentifier("heartbeat table", name); err != nil {
		return "", err
	}
	return quote(db.storedName(driver.Table{Name: name})), nil
}

// Role reads the server's server_id, host name and port, and its replica
// status.
func (db *DB) Role(ctx context.Context) (driver.Role, error) {
	var id, host, port string
	if err := db.pool.QueryRowContext(ctx, roleSQL).Scan(&id, &host, &port); err != nil {
		return driver.Role{}, fmt.Errorf("mysql: reading the server's identity: %w", classify(err))
	}
	r := driver.Role{Instance: id + "@" + host + ":" + port, Identity: id}
	rows, err := db.replicaStatus(ctx)
	if err != nil {
		return driver.Role{}, err
	}
	r.Replica, r.Upstream, r.Evidence = replicaRole(rows)
	return r, nil
}

// replicaStatus runs SHOW REPLICA STATUS, or SHOW SLAVE STATUS on a
// server that does not know it, and returns its rows as column → value.
func (db *DB) replicaStatus(ctx context.Context) ([]map[string]string, error) {
	rows, err := db.pool.QueryContext(ctx, replicaStatusSQL)
	if number(err) == 1064 {
		rows, err = db.pool.QueryContext(ctx, slaveStatusSQL)
	}
	if err != nil {
		if number(err) == erSpecificAccess {
			return nil, fmt.Errorf("mysql: SHOW REPLICA STATUS needs the REPLICATION CLIENT privilege (or REPLICA MONITOR on MariaDB) to tell whether the server is a replica: %w", classify(err))
		}
		return nil, fmt.Errorf("mysql: reading the replica status: %w", classify(err))
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, classify(err)
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, classify(err)
		}
		row := make(map[string]string, len(cols))
		for i, c := range cols {
			row[c] = vals[i].String
		}
		out = append(out, row)
	}
	return out, classify(rows.Err())
}

// replicaRole reads the rows of SHOW REPLICA STATUS: a server with none
// replicates from no one; one with a row replicates from the server_id
// it names. With several (multi-source replication) the source is not
// one server, and Upstream is left empty.
func replicaRole(rows []map[string]string) (replica bool, upstream, evidence string) {
	if len(rows) == 0 {
		return false, "", "SHOW REPLICA STATUS returns no row: it replicates from no server"
	}
	if len(rows) > 1 {
		return true, "", fmt.Sprintf("SHOW REPLICA STATUS returns %d sources", len(rows))
	}
	r := rows[0]
	pick := func(names ...string) string {
		for _, n := range names {
			if v, ok := r[n]; ok {
				return v
			}
		}
		return ""
	}
	upstream = pick("Source_Server_Id", "Master_Server_Id")
	host, port := pick("Source_Host", "Master_Host"), pick("Source_Port", "Master_Port")
	io, sqlThread := pick("Replica_IO_Running", "Slave_IO_Running"), pick("Replica_SQL_Running", "Slave_SQL_Running")
	return true, upstream, fmt.Sprintf("replicating from %s:%s, server_id %s; I/O thread %s, SQL thread %s",
		host, port, upstream, strings.ToLower(io), strings.ToLower(sqlThread))
}

// CreateHeartbeat creates the heartbeat table with its row and records
// it in the marker table, under the table-change lock.
func (db *DB) CreateHeartbeat(ctx context.Context, name string) error {
	table, err := db.heartbeatTable(name)
	if err != nil {
		return err
	}
	return db.withLock(ctx, func(c *sql.Conn) error {
		if err := ensureMarker(ctx, c); err != nil {
			return err
		}
		if _, err := c.ExecContext(ctx, heartbeatCreateSQL(table)); err != nil {
			return createError(err, table)
		}
		if err := recordCreated(ctx, c, db.storedName(driver.Table{Name: name}), table); err != nil {
			return err
		}
		if _, err := c.ExecContext(ctx, heartbeatInsertSQL(table)); err != nil {
			return ddlError("fill the heartbeat table "+table, err)
		}
		return nil
	})
}

// WriteHeartbeat sets the row's sequence; the statement commits on its
// own.
func (db *DB) WriteHeartbeat(ctx context.Context, name string, seq int64) error {
	table, err := db.heartbeatTable(name)
	if err != nil {
		return err
	}
	// Rows affected is not checked: MySQL counts a row set to the value
	// it has as unchanged, which a repeated sequence would be.
	if _, err := db.pool.ExecContext(ctx, heartbeatWriteSQL(table), seq); err != nil {
		return fmt.Errorf("mysql: writing the heartbeat: %w", classify(err))
	}
	return nil
}

// ReadHeartbeat reads the row's sequence. A table the replica has not yet
// created (1146) or a row it has not seen is not found.
func (db *DB) ReadHeartbeat(ctx context.Context, name string) (int64, bool, error) {
	table, err := db.heartbeatTable(name)
	if err != nil {
		return 0, false, err
	}
	var seq int64
	err = db.pool.QueryRowContext(ctx, heartbeatReadSQL(table)).Scan(&seq)
	switch {
	case err == nil:
		return seq, true, nil
	case errors.Is(err, sql.ErrNoRows), number(err) == erNoSuchTable:
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("mysql: reading the heartbeat: %w", classify(err))
}

// DropHeartbeat drops the heartbeat table through DropTable, which checks
// that dbprobe recorded creating it.
func (db *DB) DropHeartbeat(ctx context.Context, name string) error {
	if _, err := db.heartbeatTable(name); err != nil {
		return err
	}
	return db.DropTable(ctx, driver.Table{Name: name, KeyColumn: "id", KeyLength: 8, Fields: []string{"seq", "written_at"}, FieldLength: 8})
}

// HeartbeatTables lists the heartbeat tables in the current database.
func (db *DB) HeartbeatTables(ctx context.Context, prefix string) ([]string, error) {
	rows, err := db.pool.QueryContext(ctx, heartbeatListSQL, len(prefix), prefix)
	if err != nil {
		return nil, fmt.Errorf("mysql: listing the heartbeat tables: %w", classify(err))
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, classify(err)
		}
		names = append(names, n)
	}
	return names, classify(rows.Err())
}

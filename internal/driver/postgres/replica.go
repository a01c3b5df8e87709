package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// The replica capability (driver.Replicated). A physical standby made by
// pg_basebackup shares its primary's system identifier and is in
// recovery; two URLs that reach one server share the identifier and the
// postmaster's start time too, which a standby, started on its own, never
// does.

// roleSQL reads the system identifier, whether the server is in recovery
// and when its postmaster started (as epoch seconds: text that does not
// depend on the session's time zone). pg_control_system() is PUBLIC in
// every version that has it (9.6 on).
const roleSQL = `SELECT (SELECT system_identifier::text FROM pg_control_system()),
       pg_is_in_recovery(),
       extract(epoch FROM pg_postmaster_start_time())::text`

// heartbeatCreateSQL creates the heartbeat table: one row, its sequence
// and the primary's clock when it was written, for a DBA who looks. It is
// an ordinary table because an UNLOGGED one is never replicated.
func heartbeatCreateSQL(table string) string {
	return "CREATE TABLE " + table + " (id integer PRIMARY KEY, seq bigint NOT NULL, written_at timestamptz NOT NULL)"
}

// heartbeatInsertSQL adds the table's one row at sequence 0.
func heartbeatInsertSQL(table string) string {
	return "INSERT INTO " + table + " (id, seq, written_at) VALUES (1, 0, clock_timestamp())"
}

// heartbeatWriteSQL sets the row's sequence ($1).
func heartbeatWriteSQL(table string) string {
	return "UPDATE " + table + " SET seq = $1, written_at = clock_timestamp() WHERE id = 1"
}

// heartbeatReadSQL reads the row's sequence.
func heartbeatReadSQL(table string) string {
	return "SELECT seq FROM " + table + " WHERE id = 1"
}

// heartbeatListSQL lists the tables of the current schema whose names
// start with $1.
const heartbeatListSQL = `SELECT relname::text FROM pg_class
 WHERE relnamespace = to_regnamespace(current_schema()) AND relkind = 'r' AND left(relname, length($1)) = $1
 ORDER BY relname`

// HeartbeatTables lists the heartbeat tables in the current schema.
func (db *DB) HeartbeatTables(ctx context.Context, prefix string) ([]string, error) {
	rows, err := db.pool.Query(ctx, heartbeatListSQL, foldName(prefix))
	if err != nil {
		return nil, fmt.Errorf("postgres: listing the heartbeat tables: %w", classify(err))
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: listing the heartbeat tables: %w", classify(err))
	}
	return names, nil
}

// heartbeatTable is the heartbeat table's schema-qualified, quoted name,
// checked to be a plain identifier.
func (db *DB) heartbeatTable(name string) (string, error) {
	if err := driver.CheckIdentifier("heartbeat table", name); err != nil {
		return "", err
	}
	return qualify(db.schema, foldName(name)), nil
}

// Role reads the server's system identifier, recovery state and start
// time.
func (db *DB) Role(ctx context.Context) (driver.Role, error) {
	var sysid, started string
	var recovery bool
	if err := db.pool.QueryRow(ctx, roleSQL).Scan(&sysid, &recovery, &started); err != nil {
		return driver.Role{}, fmt.Errorf("postgres: reading the server's replication role: %w", classify(err))
	}
	r := driver.Role{Instance: sysid + "@" + started, Identity: sysid, Replica: recovery}
	if recovery {
		r.Upstream = sysid
		r.Evidence = "pg_is_in_recovery() is true"
	} else {
		r.Evidence = "pg_is_in_recovery() is false: it is a primary, not a standby"
	}
	return r, nil
}

// CreateHeartbeat creates the heartbeat table with its row, recorded in
// the marker table as dbprobe's, in one transaction.
func (db *DB) CreateHeartbeat(ctx context.Context, name string) error {
	table, err := db.heartbeatTable(name)
	if err != nil {
		return err
	}
	return db.createRecorded(ctx, name, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, heartbeatCreateSQL(table)); err != nil {
			return db.createError(err, table)
		}
		_, err := tx.Exec(ctx, heartbeatInsertSQL(table))
		return classify(err)
	})
}

// WriteHeartbeat sets the row's sequence; the statement commits on its
// own.
func (db *DB) WriteHeartbeat(ctx context.Context, name string, seq int64) error {
	table, err := db.heartbeatTable(name)
	if err != nil {
		return err
	}
	tag, err := db.pool.Exec(ctx, heartbeatWriteSQL(table), seq)
	if err != nil {
		return fmt.Errorf("postgres: writing the heartbeat: %w", classify(err))
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("postgres: the heartbeat table %s has lost its row", table)
	}
	return nil
}

// ReadHeartbeat reads the row's sequence. A table the standby has not yet
// replayed the creation of (42P01) or a row it has not seen is not found.
func (db *DB) ReadHeartbeat(ctx context.Context, name string) (int64, bool, error) {
	table, err := db.heartbeatTable(name)
	if err != nil {
		return 0, false, err
	}
	var seq int64
	err = db.pool.QueryRow(ctx, heartbeatReadSQL(table)).Scan(&seq)
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return seq, true, nil
	case errors.Is(err, pgx.ErrNoRows), errors.As(err, &pgErr) && pgErr.Code == "42P01":
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("postgres: reading the heartbeat: %w", classify(err))
}

// DropHeartbeat drops the heartbeat table through DropTable, which checks
// that dbprobe recorded creating it.
func (db *DB) DropHeartbeat(ctx context.Context, name string) error {
	if _, err := db.heartbeatTable(name); err != nil {
		return err
	}
	return db.DropTable(ctx, heartbeatAsTable(name))
}

// heartbeatAsTable is the heartbeat table as the key-value lifecycle sees
// it, for DropTable.
func heartbeatAsTable(name string) driver.Table {
	return driver.Table{Name: name, KeyColumn: "id", KeyLength: 8, Fields: []string{"seq", "written_at"}, FieldLength: 8}
}

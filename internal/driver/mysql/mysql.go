package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqltext"
	"github.com/dbprobe/dbprobe/internal/rawnet"
)

const libraryPath = "github.com/go-sql-driver/mysql"

// lockTimeout is how long CreateTable and DropTable wait for another
// client's table change on the same database (GET_LOCK, in seconds).
const lockTimeout = 60

// openTimeout bounds the statements Open runs once connected.
const openTimeout = time.Minute

// restoreTimeout bounds putting a server-wide setting back in Close, which
// also runs when the user presses Ctrl-C.
const restoreTimeout = 10 * time.Second

// flushVariable is the server-wide variable the durability knob turns.
const flushVariable = "innodb_flush_log_at_trx_commit"

func init() {
	driver.Register("mysql", Driver{}, "mariadb")
}

// Driver opens MySQL and MariaDB databases through go-sql-driver/mysql.
type Driver struct{}

// DB is an open MySQL or MariaDB database: a database/sql pool whose
// connections the sessions take one each, and the table lifecycle.
type DB struct {
	pool *sql.DB
	// connector opens the sessions' connections, which are not the pool's.
	connector sqldriver.Connector
	opts      driver.Options
	settings  *settings
	target    driver.Target
	lockName  string // GET_LOCK name serialising table changes in this database
	foldCase  bool   // lower_case_table_names is set: table names are stored lowercase

	serverVersion string
	mariaDB       bool
	maxPacket     int // the server's max_allowed_packet
	settingsRead  []driver.Setting

	// durability is what Open changed server-wide, put back by Close.
	durability *durabilityChange
	// durabilityNote says what the durability knob did, for Info.
	durabilityNote string
	// conns holds the thread ids of the pool's connections, so that the
	// monitor tells this run's sessions from other clients'.
	conns *connIDs

	mu       sync.Mutex
	loadPath string // how InsertBatch loads: LOAD DATA, or why not
	bulkOK   bool   // LOAD DATA LOCAL may be used
	open     map[*session]struct{}
	procsOK  map[string]bool // tables whose procedures are known to exist
	closed   bool

	procMu sync.Mutex // one procedure check at a time

	// sqlOpen hands out SQL text's connections (SQLOptions).
	sqlOpen *sqltext.Opener
}

// durabilityChange is a server-wide setting Open changed: the value before
// and the value dbprobe set.
type durabilityChange struct {
	previous, set string
	restore       sync.Once
	err           error
}

// Open connects to target, proves the server answers and the credentials
// work, applies the durability knob and reads back the server's version and
// settings. A knob MySQL does not have is refused before anything is sent.
func (Driver) Open(ctx context.Context, target driver.Target, opts driver.Options) (driver.DB, error) {
	if err := rawnet.Check(); err != nil {
		return nil, err
	}
	if err := checkKnobs(opts); err != nil {
		return nil, err
	}
	s, err := parseURL(target)
	if err != nil {
		return nil, err
	}
	s.cfg.DialFunc = dialSocket
	connector, err := gomysql.NewConnector(s.cfg)
	if err != nil {
		return nil, badinput.New("--db %s is not a usable MySQL URL: %w", target.Redacted(), &driver.Scrubbed{Msg: target.ScrubConnect(err.Error()), Err: err})
	}
	conns := &connIDs{}
	pool := sql.OpenDB(conns.connector(connector))
	// The sessions hold connections of their own; the pool serves Inspect,
	// the DDL, the monitor and the KILL of cancelled statements (of up to
	// every session's at once).
	pool.SetMaxOpenConns(max(opts.Sessions, 1) + 4)
	pool.SetMaxIdleConns(4)

	db := &DB{
		pool:      pool,
		connector: connector,
		opts:      opts,
		settings:  s,
		target:    target,
		conns:     conns,
		lockName:  lockName(s.cfg.DBName),
		open:      map[*session]struct{}{},
		procsOK:   map[string]bool{},
	}
	db.sqlOpen = &sqltext.Opener{Product: "MySQL", Pool: pool, Connector: db.sqlConnector, Idle: 4}
	// The first connection, handshake included, is bounded by the connect
	// timeout even when ctx is not: go-sql-driver bounds only the dial, and
	// a server that accepts and never answers would hang Open.
	pctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	err = pool.PingContext(pctx)
	cancel()
	if err != nil {
		pool.Close()
		return nil, openError(err, target, s)
	}
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	if err := db.readInfo(octx); err != nil {
		pool.Close()
		return nil, openError(err, target, s)
	}
	if err := db.applyDurability(octx); err != nil {
		pool.Close()
		return nil, err
	}
	// Read after the durability knob: the settings report what is in force.
	if err := db.readSettings(octx); err != nil {
		db.Close()
		return nil, openError(err, target, s)
	}
	return db, nil
}

// checkKnobs refuses the knobs MySQL does not have, before any connection.
func checkKnobs(opts driver.Options) error {
	if opts.TableType == driver.TableNondurable {
		return driver.Unsupported("MySQL", "non-durable table (--table-type nondurable)",
			"use --table-type memory (ENGINE=MEMORY, not durable) or --durability delayed")
	}
	if opts.DurabilityScope == driver.ScopeTransaction {
		return driver.Unsupported("MySQL", "per-transaction durability (--durability-scope transaction)",
			"innodb_flush_log_at_trx_commit is server-wide: use --durability-scope database")
	}
	return nil
}

// lockName returns the GET_LOCK name of a database's table changes. Lock
// names are server-wide and at most 64 characters long.
func lockName(database string) string {
	name := "dbprobe_tables." + database
	if len(name) <= 64 {
		return name
	}
	h := fnv.New64a()
	h.Write([]byte(database))
	return fmt.Sprintf("dbprobe_tables.%016x", h.Sum64())
}

// readInfo runs the first statements on a fresh connection, so that a
// wrong password or an unreachable server fails here.
func (db *DB) readInfo(ctx context.Context) error {
	var lctn, localInfile int
	err := db.pool.QueryRowContext(ctx, "SELECT VERSION(), @@lower_case_table_names, @@GLOBAL.local_infile, @@max_allowed_packet").
		Scan(&db.serverVersion, &lctn, &localInfile, &db.maxPacket)
	if err != nil {
		return err
	}
	db.mariaDB = strings.Contains(strings.ToLower(db.serverVersion), "mariadb")
	db.foldCase = lctn != 0
	switch {
	case !db.opts.BulkLoad:
		db.loadPath = "multi-row INSERT (bulk load not asked for)"
	case localInfile == 0:
		db.loadPath = "multi-row INSERT: the server has local_infile=OFF, which refuses LOAD DATA LOCAL"
	default:
		db.loadPath = "LOAD DATA LOCAL INFILE"
		db.bulkOK = true
	}
	return nil
}

// readSettings reads the variables back (see variables): the session
// values, which are the global ones where there is no session value, and
// the global ones, to tell a session's own value.
func (db *DB) readSettings(ctx context.Context) error {
	values, err := showVariables(ctx, db.pool, "SESSION")
	if err != nil {
		return err
	}
	global, err := showVariables(ctx, db.pool, "GLOBAL")
	if err != nil {
		return err
	}
	out := formatVariables(values, global, db.settings.cfg.Params, db.opts)
	if db.durabilityNote != "" {
		note := db.durabilityNote
		if db.opts.Durability == driver.DurabilityDelayed && values["log_bin"] == "ON" && values["sync_binlog"] != "0" {
			// The binary log has a flush of its own at commit.
			note += "; the binary log is still synced at commits (sync_binlog=" + values["sync_binlog"] + ")"
		}
		out = append(out, driver.Setting{Name: "durability", Value: note})
	}
	if db.opts.TableType == driver.TableMemory {
		out = append(out, driver.Setting{Name: "table type", Value: "ENGINE=MEMORY: not durable, rows are lost when the server restarts; not transactional, a failed batch may leave part of its rows"})
		limit := "as large as the server allows (raised for the CREATE TABLE)"
		if db.settings.maxHeapTableSize > 0 {
			limit = strconv.FormatUint(db.settings.maxHeapTableSize, 10) + " bytes (max_heap_table_size from the URL)"
		}
		out = append(out, driver.Setting{Name: "memory table limit", Value: limit})
	}
	if db.opts.OpPath == driver.PathProcedure {
		out = append(out, driver.Setting{Name: "operation path", Value: "stored procedures, one CALL per operation"})
	}
	db.mu.Lock()
	db.settingsRead = out
	db.mu.Unlock()
	return nil
}

// Info describes the driver, the server and its settings. The load path is
// read at each call: a server that refuses LOAD DATA LOCAL only when it is
// tried changes it during the load.
func (db *DB) Info() driver.Info {
	db.mu.Lock()
	defer db.mu.Unlock()
	settings := append([]driver.Setting(nil), db.settingsRead...)
	settings = append(settings, driver.Setting{Name: "load path", Value: db.loadPath}, driver.Setting{Name: "tls", Value: db.settings.tls}, driver.Setting{Name: "raw socket calls", Value: rawnet.Setting()})
	return driver.Info{
		Driver:        "mysql",
		Product:       db.product(),
		Library:       "go-sql-driver/mysql " + driver.ModuleVersion(libraryPath),
		ServerVersion: db.serverVersion,
		Settings:      settings,
	}
}

// bulkLoad reports whether InsertBatch may use LOAD DATA LOCAL.
func (db *DB) bulkLoad() bool {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.bulkOK
}

// refuseBulkLoad records that the server refused LOAD DATA LOCAL, so that
// every later batch goes through INSERT and Info says why.
func (db *DB) refuseBulkLoad(err error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.bulkOK {
		db.bulkOK = false
		db.loadPath = "multi-row INSERT: the server refused LOAD DATA LOCAL (error " + strconv.Itoa(int(number(err))) + ", local_infile=OFF)"
	}
}

// applyDurability sets innodb_flush_log_at_trx_commit for the durability
// knob. The variable is server-wide: it is changed only when it differs,
// and Close puts the previous value back. Without the privilege it returns
// a badinput error having changed nothing.
func (db *DB) applyDurability(ctx context.Context) error {
	var want string
	switch db.opts.Durability {
	case driver.DurabilityServer:
		return nil
	case driver.DurabilityFull:
		want = "1"
	case driver.DurabilityDelayed:
		want = "2"
	default:
		return fmt.Errorf("mysql: unknown durability %v", db.opts.Durability)
	}
	current, err := db.flushSetting(ctx)
	if err != nil {
		return openError(err, db.target, db.settings)
	}
	// MariaDB's 3 flushes at every commit too: it is already full.
	if current == want || (want == "1" && current == "3") {
		db.durabilityNote = fmt.Sprintf("%s: %s is already %s on the server; unchanged", db.opts.Durability, flushVariable, current)
		return nil
	}
	if _, err := db.pool.ExecContext(ctx, "SET GLOBAL "+flushVariable+" = "+want); err != nil {
		if number(err) == erSpecificAccess || number(err) == erDBAccessDenied {
			return badinput.New("--durability %s needs %s=%s, a server-wide setting, and user %q may not set it (it needs the SUPER or SYSTEM_VARIABLES_ADMIN privilege); ask the DBA to set it, then run with --durability server",
				db.opts.Durability, flushVariable, want, db.settings.cfg.User)
		}
		return fmt.Errorf("mysql: SET GLOBAL %s = %s: %w", flushVariable, want, classify(err))
	}
	db.durability = &durabilityChange{previous: current, set: want}
	got, err := db.flushSetting(ctx)
	if err != nil {
		db.restoreDurability()
		return classify(err)
	}
	if got != want {
		db.restoreDurability()
		return fmt.Errorf("mysql: set %s to %s, but the server reports %s", flushVariable, want, got)
	}
	db.durabilityNote = fmt.Sprintf("%s: %s changed server-wide from %s to %s for this run; put back when dbprobe exits", db.opts.Durability, flushVariable, current, want)
	return nil
}

// flushSetting reads the global innodb_flush_log_at_trx_commit.
func (db *DB) flushSetting(ctx context.Context) (string, error) {
	var v string
	err := db.pool.QueryRowContext(ctx, "SELECT @@GLOBAL."+flushVariable).Scan(&v)
	return v, err
}

// restoreDurability puts back what applyDurability changed, once, unless
// someone has changed the variable again since: their value stands.
func (db *DB) restoreDurability() error {
	ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
	defer cancel()
	return db.RestoreSettings(ctx)
}

var _ driver.SettingsRestorer = (*DB)(nil)

// RestoreSettings puts innodb_flush_log_at_trx_commit back to what it was
// before Open, if Open changed it and nobody has changed it since. It
// runs once: later calls, Close's included, return the first one's
// outcome.
func (db *DB) RestoreSettings(ctx context.Context) error {
	c := db.durability
	if c == nil {
		return nil
	}
	c.restore.Do(func() {
		now, err := db.flushSetting(ctx)
		if err != nil {
			c.err = fmt.Errorf("mysql: %s was not put back to %s: %w", flushVariable, c.previous, classify(err))
			return
		}
		if now != c.set {
			return
		}
		if _, err := db.pool.ExecContext(ctx, "SET GLOBAL "+flushVariable+" = "+c.previous); err != nil {
			c.err = fmt.Errorf("mysql: %s was not put back to %s: %w", flushVariable, c.previous, classify(err))
		}
	})
	return c.err
}

// Close puts back a server-wide setting Open changed and releases every
// connection. Sessions still open are closed first; they must be idle.
// Closing twice is harmless.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return db.restoreDurability()
	}
	db.closed = true
	left := make([]*session, 0, len(db.open))
	for s := range db.open {
		left = append(left, s)
	}
	db.mu.Unlock()
	for _, s := range left {
		s.Close()
	}
	err := db.restoreDurability()
	db.sqlOpen.Close()
	db.pool.Close()
	return err
}

// storedName is a table's name as the catalog and the marker table hold it.
func (db *DB) storedName(t driver.Table) string {
	if db.foldCase {
		return strings.ToLower(t.Name)
	}
	return t.Name
}

// Inspect reports whether the table exists in the URL's database, whether
// dbprobe recorded creating it, whether it holds rows, its columns and how
// it is stored.
func (db *DB) Inspect(ctx context.Context, t driver.Table) (driver.TableState, error) {
	if err := driver.CheckTable(t); err != nil {
		return driver.TableState{}, err
	}
	var st driver.TableState
	name := db.storedName(t)
	var engine, rowFormat, tableType, maxData sql.NullString
	err := db.pool.QueryRowContext(ctx,
		`SELECT ENGINE, ROW_FORMAT, TABLE_TYPE, MAX_DATA_LENGTH FROM information_schema.TABLES
		 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?`, name).Scan(&engine, &rowFormat, &tableType, &maxData)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return st, nil
	case err != nil:
		return st, classify(err)
	}
	st.Exists = true
	st.Type, st.Storage = storage(engine.String, rowFormat.String, tableType.String, maxData)

	rows, err := db.pool.QueryContext(ctx,
		`SELECT COLUMN_NAME FROM information_schema.COLUMNS
		 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, name)
	if err != nil {
		return st, classify(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return st, classify(err)
		}
		st.Columns = append(st.Columns, c)
	}
	if err := rows.Err(); err != nil {
		return st, classify(err)
	}
	rows.Close()

	own, err := db.ownership(ctx, db.pool, name)
	if err != nil {
		return st, err
	}
	st.CreatedByDbprobe, st.OwnershipNote = own.Owned(), own.Note()
	d, err := newDialect(t, driver.TableDisk)
	if err != nil {
		return st, err
	}
	var one int
	err = db.pool.QueryRowContext(ctx, d.hasRows()).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return st, classify(err)
	default:
		st.HasRows = true
	}
	return st, nil
}

// CheckPrivileges runs, for each privilege in need, a statement of that
// kind that matches no row, inside a transaction it rolls back: MySQL
// checks a statement's privileges, on the table or its columns, before it
// looks for rows, so a refusal names the missing privilege while nothing
// changes. (The grant tables hold global, database, table, column and
// role grants; asking the server is simpler and exact.)
func (db *DB) CheckPrivileges(ctx context.Context, t driver.Table, need driver.Access) error {
	d, err := newDialect(t, driver.TableDisk)
	if err != nil {
		return err
	}
	c, err := db.pool.Conn(ctx)
	if err != nil {
		return classify(err)
	}
	defer c.Close()
	var user string
	if err := c.QueryRowContext(ctx, "SELECT CURRENT_USER()").Scan(&user); err != nil {
		return classify(err)
	}
	for _, p := range need.Privileges() {
		if err := probePrivilege(ctx, c, d.privilegeProbe(p)); err != nil {
			if n := number(err); n == erTableAccessDenied || n == erColumnAccessDenied {
				grant := fmt.Sprintf("GRANT %s ON %s TO %s", p, d.table, accountName(user))
				return driver.MissingPrivilege("MySQL", accountName(user), d.table, p, need, grant)
			}
			return classify(err)
		}
	}
	return nil
}

// probePrivilege runs one statement in a transaction and rolls it back.
func probePrivilege(ctx context.Context, c *sql.Conn, stmt string) error {
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, stmt)
	return err
}

// accountName writes CURRENT_USER()'s user@host as GRANT takes it,
// 'user'@'host'.
func accountName(current string) string {
	user, host := current, "%"
	if i := strings.LastIndexByte(current, '@'); i >= 0 {
		user, host = current[:i], current[i+1:]
	}
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	return q(user) + "@" + q(host)
}

// storage describes a table from information_schema.TABLES: its table type
// and, in MySQL's words, its engine.
func storage(engine, rowFormat, tableType string, maxData sql.NullString) (driver.TableType, string) {
	if engine == "" {
		return driver.TableDisk, tableType // a VIEW, a SYSTEM VIEW
	}
	s := "ENGINE=" + engine
	if strings.EqualFold(engine, "MEMORY") || strings.EqualFold(engine, "HEAP") {
		s += " (not durable: rows are lost when the server restarts"
		// MAX_DATA_LENGTH is the room for rows that max_heap_table_size
		// left the table; beyond a petabyte it is the server's largest
		// max_heap_table_size: no limit worth saying.
		if n, err := strconv.ParseUint(maxData.String, 10, 64); err == nil && n > 0 && n < 1<<50 {
			s += "; room for at most " + formatBytes(n) + " of rows"
		}
		return driver.TableMemory, s + ")"
	}
	if rowFormat != "" {
		s += " ROW_FORMAT=" + rowFormat
	}
	return driver.TableDisk, s
}

// formatBytes writes a byte count in KiB, MiB or GiB.
func formatBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// querier is a pool or one connection of it.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ownership reads what the marker table says about the table and the
// table's identity now (tableIdentity). A user who may not see the marker
// table sees the table as not dbprobe's.
func (db *DB) ownership(ctx context.Context, q querier, name string) (driver.Ownership, error) {
	own := driver.Ownership{Marker: markerTable, RebuiltBy: "ALTER TABLE or OPTIMIZE TABLE"}
	var markers, withIdentity int
	var current sql.NullString
	err := q.QueryRowContext(ctx,
		`SELECT (SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?),
		        (SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?),
		        (`+tableIdentity+`)`,
		markerTable, markerTable, identityColumn, name).Scan(&markers, &withIdentity, &current)
	if err != nil || markers == 0 {
		return own, classify(err)
	}
	own.CurrentIdentity = current.String
	recordedIdentity := "''" // a marker table of an earlier dbprobe has no identities
	if withIdentity > 0 {
		recordedIdentity = "IFNULL(" + quote(identityColumn) + ", '')"
	}
	err = q.QueryRowContext(ctx, "SELECT "+recordedIdentity+" FROM "+quote(markerTable)+" WHERE table_name = ?", name).
		Scan(&own.RecordedIdentity)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return own, nil
	case err != nil:
		return own, classify(err)
	}
	own.Recorded = true
	return own, nil
}

// addIdentityColumn gives a marker table an earlier dbprobe created the
// column for identities.
func addIdentityColumn(ctx context.Context, c *sql.Conn) error {
	var present int
	err := c.QueryRowContext(ctx,
		"SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?",
		markerTable, identityColumn).Scan(&present)
	if err != nil || present > 0 {
		return classify(err)
	}
	if _, err := c.ExecContext(ctx, "ALTER TABLE "+quote(markerTable)+" ADD COLUMN "+quote(identityColumn)+" TEXT NULL"); err != nil {
		return ddlError("add column "+identityColumn+" to the marker table "+markerTable, err)
	}
	return nil
}

// withLock runs fn on one connection holding the database's table-change
// lock, so that two clients creating or dropping tables do not race on the
// marker table. MySQL's DDL commits at once, so the lock, not a
// transaction, keeps the marker table and the tables in step.
func (db *DB) withLock(ctx context.Context, fn func(c *sql.Conn) error) error {
	c, err := db.pool.Conn(ctx)
	if err != nil {
		return classify(err)
	}
	defer c.Close()
	var got sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", db.lockName, lockTimeout).Scan(&got); err != nil {
		return classify(err)
	}
	if !got.Valid || got.Int64 != 1 {
		return fmt.Errorf("mysql: another client held lock %s for %d s while changing tables; try again", db.lockName, lockTimeout)
	}
	defer c.ExecContext(context.WithoutCancel(ctx), "DO RELEASE_LOCK(?)", db.lockName)
	return fn(c)
}

// CreateTable creates the table, records it in the marker table and, on
// the procedure path, creates its procedures. MySQL commits each DDL
// statement at once: when recording fails, the new table is dropped again.
func (db *DB) CreateTable(ctx context.Context, t driver.Table) error {
	d, err := newDialect(t, db.opts.TableType)
	if err != nil {
		return err
	}
	if db.opts.OpPath == driver.PathProcedure {
		if err := checkProcedureNames(t); err != nil {
			return err
		}
	}
	name := db.storedName(t)
	return db.withLock(ctx, func(c *sql.Conn) error {
		if err := ensureMarker(ctx, c); err != nil {
			return err
		}
		id, err := driver.NewTableID()
		if err != nil {
			return err
		}
		if db.opts.TableType == driver.TableMemory {
			// A MEMORY table's size limit is max_heap_table_size when it is
			// created: the server's default (16 MiB) is full at about
			// twelve thousand YCSB records.
			size := "18446744073709551615" // clipped by the server to its largest
			if db.settings.maxHeapTableSize > 0 {
				size = strconv.FormatUint(db.settings.maxHeapTableSize, 10)
			}
			if _, err := c.ExecContext(ctx, "SET SESSION max_heap_table_size = "+size); err != nil {
				return fmt.Errorf("mysql: set max_heap_table_size: %w", classify(err))
			}
			defer c.ExecContext(context.WithoutCancel(ctx), "SET SESSION max_heap_table_size = DEFAULT")
		}
		if _, err := c.ExecContext(ctx, d.createTable(db.opts.TableType, id)); err != nil {
			return createError(err, d.table)
		}
		if err := recordCreated(ctx, c, name, d.table); err != nil {
			return err
		}
		if db.opts.OpPath == driver.PathProcedure {
			// The table is new: procedures under its names are left over
			// from a table of that name that is gone, and are replaced.
			if err := createProcedures(ctx, c, d, true); err != nil {
				return err
			}
			db.mu.Lock()
			db.procsOK[name] = true
			db.mu.Unlock()
		}
		return nil
	})
}

// ensureMarker creates the marker table when it is missing, and gives one
// an earlier dbprobe created the column for identities.
func ensureMarker(ctx context.Context, c *sql.Conn) error {
	if _, err := c.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+quote(markerTable)+
		" (table_name VARBINARY(64) NOT NULL PRIMARY KEY, created_at DATETIME(6) NOT NULL, dbprobe_version VARCHAR(100) NOT NULL, "+
		quote(identityColumn)+" TEXT NULL) ENGINE=InnoDB"); err != nil {
		return ddlError("create the marker table "+markerTable, err)
	}
	return addIdentityColumn(ctx, c)
}

// createError is the error of a CREATE TABLE: bad input when the table
// exists.
func createError(err error, table string) error {
	if number(err) == erTableExists {
		return badinput.New("%w; drop it or choose another table name",
			&driver.Scrubbed{Msg: "table " + table + " already exists", Err: classify(err)})
	}
	return ddlError("create table "+table, err)
}

// recordCreated records table name (as the catalog holds it; quoted, the
// table) in the marker table with its identity, the table having just
// been created on c. MySQL commits DDL at once: when the table cannot be
// recorded, it is dropped again, so that no table of dbprobe's goes
// unrecorded. A row left by a table someone else dropped is replaced.
func recordCreated(ctx context.Context, c *sql.Conn, name, table string) error {
	var identity sql.NullString
	err := c.QueryRowContext(ctx, tableIdentity, name).Scan(&identity)
	if err == nil && !identity.Valid {
		err = errors.New("information_schema.TABLES does not list it")
	}
	if err == nil {
		_, err = c.ExecContext(ctx, "INSERT INTO "+quote(markerTable)+" (table_name, created_at, dbprobe_version, "+quote(identityColumn)+") VALUES (?, NOW(6), ?, ?)"+
			" ON DUPLICATE KEY UPDATE created_at = VALUES(created_at), dbprobe_version = VALUES(dbprobe_version), "+
			quote(identityColumn)+" = VALUES("+quote(identityColumn)+")", name, version(), identity.String)
	}
	if err != nil {
		_, _ = c.ExecContext(context.WithoutCancel(ctx), "DROP TABLE "+table)
		return ddlError("record table "+table+" in "+markerTable, err)
	}
	return nil
}

// createProcedures creates the table's procedures: all of them after
// dropping any of the same names when replace is set, else those missing.
func createProcedures(ctx context.Context, c *sql.Conn, d *dialect, replace bool) error {
	names := d.procs.All()
	missing := map[string]bool{}
	if replace {
		for _, n := range names {
			if _, err := c.ExecContext(ctx, dropProcedure(n)); err != nil {
				return ddlError("drop procedure "+quote(n), err)
			}
			missing[n] = true
		}
	} else {
		var err error
		if missing, err = missingProcedures(ctx, c, names); err != nil {
			return err
		}
	}
	for i, stmt := range d.procedures() {
		if !missing[names[i]] {
			continue
		}
		if _, err := c.ExecContext(ctx, stmt); err != nil && number(err) != erSPAlreadyExists {
			return ddlError("create procedure "+quote(names[i]), err)
		}
	}
	return nil
}

// missingProcedures returns which of names are not procedures of the
// database.
func missingProcedures(ctx context.Context, c *sql.Conn, names []string) (map[string]bool, error) {
	missing := map[string]bool{}
	for _, n := range names {
		missing[n] = true
	}
	rows, err := c.QueryContext(ctx,
		`SELECT ROUTINE_NAME FROM information_schema.ROUTINES
		 WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_NAME IN (?, ?, ?, ?, ?)`,
		names[0], names[1], names[2], names[3], names[4])
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, classify(err)
		}
		delete(missing, n)
	}
	return missing, classify(rows.Err())
}

// ensureProcedures creates the table's procedures when some are missing (a
// table loaded on the statement path), once per DB and table.
func (db *DB) ensureProcedures(ctx context.Context, t driver.Table, d *dialect) error {
	if err := checkProcedureNames(t); err != nil {
		return err
	}
	name := db.storedName(t)
	db.procMu.Lock()
	defer db.procMu.Unlock()
	db.mu.Lock()
	ok := db.procsOK[name]
	db.mu.Unlock()
	if ok {
		return nil
	}
	err := db.withLock(ctx, func(c *sql.Conn) error { return createProcedures(ctx, c, d, false) })
	if err != nil {
		return err
	}
	db.mu.Lock()
	db.procsOK[name] = true
	db.mu.Unlock()
	return nil
}

// DropTable drops a table dbprobe recorded creating, with its procedures,
// and forgets it. It refuses any other table.
func (db *DB) DropTable(ctx context.Context, t driver.Table) error {
	d, err := newDialect(t, driver.TableDisk)
	if err != nil {
		return err
	}
	name := db.storedName(t)
	return db.withLock(ctx, func(c *sql.Conn) error {
		own, err := db.ownership(ctx, c, name)
		if err != nil {
			return err
		}
		// A recorded table that is gone leaves its row and maybe its
		// procedures, which go.
		if !own.Owned() && !(own.Recorded && own.CurrentIdentity == "") {
			if note := own.Note(); note != "" {
				return badinput.New("refusing to drop table %s: %s", d.table, note)
			}
			return badinput.New("refusing to drop table %s: dbprobe did not create it (it is not in %s); drop it yourself or choose another table name",
				d.table, markerTable)
		}
		if _, err := c.ExecContext(ctx, "DROP TABLE IF EXISTS "+d.table); err != nil {
			return ddlError("drop table "+d.table, err)
		}
		// Whatever the path the table was used on: procedures may have
		// been created by a run on the procedure path.
		for _, p := range d.procs.All() {
			if len(p) > maxIdentifier {
				continue // no procedure can have that name
			}
			if _, err := c.ExecContext(ctx, dropProcedure(p)); err != nil {
				return ddlError("drop procedure "+quote(p), err)
			}
		}
		db.mu.Lock()
		delete(db.procsOK, name)
		db.mu.Unlock()
		if _, err := c.ExecContext(ctx, "DELETE FROM "+quote(markerTable)+" WHERE table_name = ?", name); err != nil {
			return ddlError("forget table "+d.table+" in "+markerTable, err)
		}
		return nil
	})
}

// version is dbprobe's own version as the build recorded it.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "unknown"
}

// product names the server as its users do: MariaDB reports itself in its
// version string, MySQL does not.
func (db *DB) product() string {
	if db.mariaDB {
		return "MariaDB"
	}
	return "MySQL"
}

package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/rawnet"
)

const libraryPath = "github.com/jackc/pgx/v5"

// connectTimeout bounds how long opening one connection may take when the URL
// sets no connect_timeout, so that an unreachable host fails in bounded time
// rather than after the kernel's TCP retries (minutes).
const connectTimeout = 10 * time.Second

// cancelDeadlineDelay is how long after a context ends the socket deadline
// fires. The cancel request goes out at once and normally ends the statement
// with 57014, keeping the connection; the deadline is the fallback for a
// server that does not answer, at the price of the connection.
const cancelDeadlineDelay = 3 * time.Second

// applicationName is the application_name of dbprobe's connections when
// the URL sets none.
const applicationName = "dbprobe"

func init() {
	driver.Register("postgres", Driver{}, "postgresql")
}

// Driver opens PostgreSQL databases through pgx's native interface.
type Driver struct{}

// DB is an open PostgreSQL database: a pgxpool for the table lifecycle, and
// the configuration sessions open their own connections with.
type DB struct {
	pool *pgxpool.Pool
	opts driver.Options
	// connConfig opens the sessions' own connections.
	connConfig *pgconn.Config
	// connecting says why a session's connection could not be opened.
	connecting driver.Connecting
	info       driver.Info
	schema     string // current_schema() of the pool's connections, "" if none
	// synchronousCommit is the synchronous_commit a session's connection
	// reads back, as the server spells it.
	synchronousCommit string
	// setByDbprobe holds the startup parameters dbprobe added to the
	// URL's, with the flag that asked for each, so that Info says so.
	setByDbprobe map[string]string
	seq          atomic.Uint64

	mu   sync.Mutex
	open map[*session]struct{} // sessions not yet closed

	// procMu guards procReady: the tables, by folded name, whose functions
	// this DB has created or found, so that only a DB's first session on a
	// table looks for them.
	procMu    sync.Mutex
	procReady map[string]bool

	// closedMu guards closedPIDs: the backends of SQLConns closed whose
	// end Costs has not seen yet.
	closedMu   sync.Mutex
	closedPIDs []uint32
}

// Open connects to target, proves the server answers and the credentials
// work, and reads back the server's version and settings.
func (Driver) Open(ctx context.Context, target driver.Target, opts driver.Options) (driver.DB, error) {
	if err := rawnet.Check(); err != nil {
		return nil, err
	}
	if target.URL == nil {
		return nil, badinput.New("no PostgreSQL URL; give one such as postgres://user@127.0.0.1:5432/bench")
	}
	if opts.TableType == driver.TableMemory {
		return nil, driver.Unsupported("PostgreSQL", "in-memory table (--table-type memory)",
			"use --table-type nondurable for an UNLOGGED table (not crash-safe, still on disk)")
	}
	cfg, tlsMode, err := poolConfig(target)
	if err != nil {
		return nil, err
	}
	cc := cfg.ConnConfig
	setByDbprobe := map[string]string{}
	if _, ok := urlSetting(cc.RuntimeParams, "synchronous_commit"); !ok && synchronousCommit(opts.Durability) != "" {
		setByDbprobe["synchronous_commit"] = "--durability " + opts.Durability.String()
	}
	if err := applyDurability(cc.RuntimeParams, opts.Durability); err != nil {
		return nil, err
	}
	// Every connection names itself, so that a DBA can tell dbprobe's in
	// pg_stat_activity; a name the URL gives is kept.
	if _, ok := urlSetting(cc.RuntimeParams, "application_name"); !ok {
		cc.RuntimeParams["application_name"] = applicationName
	}
	if target.Password != "" {
		cc.Password = target.Password
	}
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = connectTimeout
	}
	cc.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: cancelDeadlineDelay}
	}
	// Sessions open connections of their own (see Session); the pool serves
	// Open, Inspect and the DDL, and never needs more than this.
	sessions := max(opts.Sessions, 1)
	cfg.MaxConns = int32(min(sessions+2, 1<<30))
	cfg.MinConns = 0

	addr := cc.Host
	if !strings.HasPrefix(addr, "/") {
		addr = net.JoinHostPort(cc.Host, fmt.Sprint(cc.Port))
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, openError(err, target, cc.User, cc.Database, addr)
	}
	db := &DB{pool: pool, opts: opts, connConfig: cc.Config.Copy(), setByDbprobe: setByDbprobe, open: map[*session]struct{}{}, procReady: map[string]bool{},
		connecting: driver.Connecting{Database: "PostgreSQL", Addr: addr, Target: target, Timeout: pgconn.Timeout}}
	if err := db.readInfo(ctx); err != nil {
		pool.Close()
		return nil, openError(err, target, cc.User, cc.Database, addr)
	}
	db.info.Settings = append(db.info.Settings, driver.Setting{Name: "tls", Value: tlsMode}, driver.Setting{Name: "raw socket calls", Value: rawnet.Setting()})
	if err := db.checkDurability(); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// synchronousCommit is the synchronous_commit a durability asks for; ""
// for DurabilityServer, which leaves the server's setting.
func synchronousCommit(d driver.Durability) string {
	switch d {
	case driver.DurabilityFull:
		return "on"
	case driver.DurabilityDelayed:
		return "off"
	}
	return ""
}

// durabilityAgrees reports whether a synchronous_commit value keeps the
// promise of a durability: full needs the commit's WAL flushed to the local
// disk before it is acknowledged, which every value but off does (local,
// remote_write, on and remote_apply differ only in what they wait for from
// a synchronous standby); delayed needs off.
func durabilityAgrees(d driver.Durability, value string) bool {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "off", "false", "no", "0":
		return d != driver.DurabilityFull
	case "on", "true", "yes", "1", "local", "remote_write", "remote_apply":
		return d != driver.DurabilityDelayed
	}
	return false
}

// applyDurability sets synchronous_commit among the connections' startup
// parameters, so that the server applies it to every connection this DB
// opens (the pool's and each session's) as it starts, as a SET at the start
// of the session would, without a round trip more. synchronous_commit is a
// per-session setting any user may change, so nothing server-wide changes
// and Close has nothing to put back.
//
// Both durability scopes are served this way. A session runs every
// operation as a transaction of its own (InsertBatch as one transaction
// too), so the session's setting governs each commit exactly as a SET LOCAL
// in every transaction would, without a statement more per operation.
//
// A URL that already sets synchronous_commit to a value that agrees is
// kept; one that contradicts --durability is bad input, never silently
// overridden.
func applyDurability(params map[string]string, d driver.Durability) error {
	want := synchronousCommit(d)
	if want == "" {
		return nil
	}
	if have, ok := urlSetting(params, "synchronous_commit"); ok {
		if !durabilityAgrees(d, have) {
			return badinput.New("--durability %s asks for synchronous_commit = %s, but the URL sets synchronous_commit = %s; remove one of them", d, want, have)
		}
		return nil
	}
	params["synchronous_commit"] = want
	return nil
}

// checkDurability compares the synchronous_commit read back with what the
// durability asked for: a value the server did not take is an error, never
// a result measured under the wrong setting.
func (db *DB) checkDurability() error {
	if db.opts.Durability == driver.DurabilityServer {
		return nil
	}
	if !durabilityAgrees(db.opts.Durability, db.synchronousCommit) {
		return fmt.Errorf("postgres: --durability %s set synchronous_commit = %s, but the server reports %s", db.opts.Durability, synchronousCommit(db.opts.Durability), db.synchronousCommit)
	}
	return nil
}

// durabilityText says in Info what the durability knob did.
func durabilityText(opts driver.Options) string {
	want := synchronousCommit(opts.Durability)
	if want == "" {
		return "server: synchronous_commit as the server and the URL set it"
	}
	text := fmt.Sprintf("%s: synchronous_commit = %s on every dbprobe connection, from its start", opts.Durability, want)
	if opts.DurabilityScope == driver.ScopeTransaction {
		text += "; scope transaction is the same here: every operation is a transaction of its own, committed under its session's setting"
	}
	return text
}

// readInfo runs the first statement on a fresh connection, so a wrong
// password or an unreachable server fails here, and fills Info. The
// settings are read on a connection opened the way a session's is (see
// settings): synchronous_commit, the isolation and the timeouts are each
// session's, which the URL, the role and the database may set.
func (db *DB) readInfo(ctx context.Context) error {
	err := db.pool.QueryRow(ctx, "SELECT coalesce(current_schema(), ''), current_setting('server_version')").
		Scan(&db.schema, &db.info.ServerVersion)
	if err != nil {
		return err
	}
	if db.schema == "" {
		// Every statement names the table in current_schema(), which is
		// NULL when no schema of the search_path exists.
		var path string
		if err := db.pool.QueryRow(ctx, "SELECT current_setting('search_path')").Scan(&path); err != nil {
			return err
		}
		return badinput.New("PostgreSQL: no schema of search_path (%s) exists in this database, so there is nowhere to put or find the table; create one, or set ?search_path= in the URL to a schema that exists", path)
	}
	answer, err := db.readSessionSettings(ctx)
	if err != nil {
		return err
	}
	db.info.Driver = "postgres"
	db.info.Product = "PostgreSQL"
	db.info.Library = libraryPath + " " + driver.ModuleVersion(libraryPath)
	for _, r := range answer.rows {
		if r.name == "synchronous_commit" {
			db.synchronousCommit = r.value
		}
	}
	o := origin{dbprobeSet: db.setByDbprobe, params: db.connConfig.RuntimeParams}
	for _, s := range formatSettings(answer, o) {
		db.info.Settings = append(db.info.Settings, s)
		// How the operations commit goes beside the isolation they run at.
		if s.Name == "transaction_isolation" {
			db.info.Settings = append(db.info.Settings, driver.Setting{Name: "autocommit", Value: autocommitText(db.opts), KeyValue: true})
		}
	}
	db.info.Settings = append(db.info.Settings, driver.Setting{Name: "durability", Value: durabilityText(db.opts)})
	return nil
}

// Info describes the driver, the server and its settings.
func (db *DB) Info() driver.Info { return db.info }

// Close releases every connection. Sessions still open are closed first
// (pgxpool would otherwise wait for them forever); they must be idle.
func (db *DB) Close() error {
	db.mu.Lock()
	left := make([]*session, 0, len(db.open))
	for s := range db.open {
		left = append(left, s)
	}
	db.mu.Unlock()
	for _, s := range left {
		s.Close()
	}
	db.pool.Close()
	return nil
}

func (db *DB) marker() string { return qualify(db.schema, markerTable) }

// Inspect reports whether the table exists in the current schema, whether
// dbprobe recorded creating it, whether it holds rows, and its columns.
func (db *DB) Inspect(ctx context.Context, t driver.Table) (driver.TableState, error) {
	if err := driver.CheckTable(t); err != nil {
		return driver.TableState{}, err
	}
	var st driver.TableState
	name := foldName(t.Name)
	// Existence first, columns after: each statement sees the catalog as
	// it is then, and a table another client creates between the two
	// would otherwise be seen to exist with no columns.
	var persistence, accessMethod string
	err := db.pool.QueryRow(ctx,
		`SELECT r.oid IS NOT NULL, coalesce(c.relpersistence::text, ''), coalesce(am.amname::text, '')
		 FROM (SELECT to_regclass(format('%I.%I', current_schema(), $1::text)) AS oid) r
		 LEFT JOIN pg_class c ON c.oid = r.oid
		 LEFT JOIN pg_am am ON am.oid = c.relam`,
		name).Scan(&st.Exists, &persistence, &accessMethod)
	if err != nil {
		return st, classify(err)
	}
	if !st.Exists {
		return st, nil
	}
	rows, err := db.pool.Query(ctx,
		`SELECT column_name::text FROM information_schema.columns
		 WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, name)
	if err != nil {
		return st, classify(err)
	}
	st.Columns, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return st, classify(err)
	}
	st.Type, st.Storage = tableStorage(persistence, accessMethod)
	own, err := db.ownership(ctx, db.pool, name)
	if err != nil {
		return st, err
	}
	st.CreatedByDbprobe, st.OwnershipNote = own.Owned(), own.Note()
	d := newDialect(db.schema, t)
	var one int
	err = db.pool.QueryRow(ctx, d.hasRows()).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return st, classify(err)
	default:
		st.HasRows = true
	}
	return st, nil
}

// CheckPrivileges asks the server, without touching the table, whether
// the current user holds each privilege in need on every column the
// operations name: a grant on the whole table and grants on its columns
// both count, as they do when the statements run.
func (db *DB) CheckPrivileges(ctx context.Context, t driver.Table, need driver.Access) error {
	if err := driver.CheckTable(t); err != nil {
		return err
	}
	d := newDialect(db.schema, t)
	for _, p := range need.Privileges() {
		// Updates set fields and find their row by key, which takes
		// SELECT on the key (asked for with UPDATE), not UPDATE.
		cols := make([]string, 0, len(t.Fields)+1)
		if p != driver.AccessUpdate {
			cols = append(cols, foldName(t.KeyColumn))
		}
		for _, f := range t.Fields {
			cols = append(cols, foldName(f))
		}
		var user string
		var held bool
		err := db.pool.QueryRow(ctx,
			`SELECT current_user::text, coalesce(bool_and(has_column_privilege($1::regclass, c, $2)), true)
			 FROM unnest($3::text[]) AS c`, d.table, p.String(), cols).Scan(&user, &held)
		if err != nil {
			return classify(err)
		}
		if !held {
			grant := fmt.Sprintf("GRANT %s ON %s TO %s", p, d.table, pgx.Identifier{user}.Sanitize())
			return driver.MissingPrivilege("PostgreSQL", user, d.table, p, need, grant)
		}
	}
	return nil
}

// execQuerier is a connection or a transaction.
type execQuerier interface {
	rowQuerier
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// rowQuerier is the pool or a transaction.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ownership reads what the marker table says about the table and the
// table's identity now: its OID, which PostgreSQL does not give again to a
// table created anew under the same name. A user who may not read the
// marker table (one granted only what the run phase needs on the table)
// sees the table as not dbprobe's: the answer that never lets dbprobe drop
// it or create functions beside it.
func (db *DB) ownership(ctx context.Context, q rowQuerier, name string) (driver.Ownership, error) {
	own := driver.Ownership{Marker: markerTable}
	var readable, withIdentity bool
	err := q.QueryRow(ctx,
		`SELECT coalesce(to_regclass(format('%I.%I', current_schema(), $1::text))::oid::text, ''),
		        coalesce(has_table_privilege(m.oid, 'SELECT'), false),
		        EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = m.oid AND a.attname = $3 AND NOT a.attisdropped)
		 FROM (SELECT to_regclass(format('%I.%I', current_schema(), $2::text)) AS oid) m`,
		name, markerTable, identityColumn).Scan(&own.CurrentIdentity, &readable, &withIdentity)
	if err != nil || !readable {
		return own, classify(err)
	}
	recordedIdentity := "''" // a marker table of an earlier dbprobe has no identities
	if withIdentity {
		recordedIdentity = "coalesce(" + identityColumn + ", '')"
	}
	err = q.QueryRow(ctx, "SELECT "+recordedIdentity+" FROM "+db.marker()+" WHERE table_name = $1", name).Scan(&own.RecordedIdentity)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return own, nil
	case err != nil:
		return own, classify(err)
	}
	own.Recorded = true
	return own, nil
}

// addIdentityColumn gives a marker table an earlier dbprobe created the
// column for identities. It asks first: ALTER TABLE wants the table's
// owner even when the column is there.
func (db *DB) addIdentityColumn(ctx context.Context, tx execQuerier) error {
	var present bool
	err := tx.QueryRow(ctx,
		"SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2 AND NOT attisdropped)",
		db.marker(), identityColumn).Scan(&present)
	if err != nil || present {
		return classify(err)
	}
	if _, err := tx.Exec(ctx, "ALTER TABLE "+db.marker()+" ADD COLUMN IF NOT EXISTS "+identityColumn+" text"); err != nil {
		return fmt.Errorf("postgres: add column %s to the marker table %s: %w", identityColumn, markerTable, classify(err))
	}
	return nil
}

// markerLock is the advisory lock key that serialises dbprobe's changes to
// the marker table, so two clients creating tables at once do not race on
// CREATE TABLE IF NOT EXISTS (which is not safe against itself).
const markerLock = 0x6462_7072_6f62_65 // "dbprobe"

// CreateTable creates the table and records it in the marker table, in one
// transaction: either both happen or neither. The table is UNLOGGED for
// TableNondurable; on the procedure path its functions are created in the
// same transaction.
func (db *DB) CreateTable(ctx context.Context, t driver.Table) error {
	if err := driver.CheckTable(t); err != nil {
		return err
	}
	d := newDialect(db.schema, t)
	proc := db.opts.OpPath == driver.PathProcedure
	if proc {
		if err := checkProcedureNames(t); err != nil {
			return err
		}
	}
	err := db.createRecorded(ctx, t.Name, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, d.createTable(t.KeyLength, t.FieldLength, db.opts.TableType == driver.TableNondurable)); err != nil {
			return db.createError(err, d.table)
		}
		if proc {
			return createProcedures(ctx, tx, d, t)
		}
		return nil
	})
	if err == nil && proc {
		db.procMu.Lock()
		db.procReady[foldName(t.Name)] = true
		db.procMu.Unlock()
	}
	return err
}

// createRecorded runs create, which creates the table name (as given, not
// yet folded) in the current schema, in one transaction with the row that
// records it in the marker table, under the marker table's lock: either
// both happen or neither. A row left by a table someone else dropped is
// replaced.
func (db *DB) createRecorded(ctx context.Context, name string, create func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if err := db.lockMarker(ctx, tx); err != nil {
			return err
		}
		if err := create(tx); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO "+db.marker()+" (table_name, created_at, dbprobe_version, "+identityColumn+")"+
			" VALUES ($1, now(), $2, to_regclass($3)::oid::text)"+
			" ON CONFLICT (table_name) DO UPDATE SET created_at = excluded.created_at, dbprobe_version = excluded.dbprobe_version, "+
			identityColumn+" = excluded."+identityColumn,
			foldName(name), version(), qualify(db.schema, foldName(name)))
		return classify(err)
	})
}

// lockMarker takes the marker table's lock for the transaction and makes
// sure the marker table exists, with its identity column.
func (db *DB) lockMarker(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(markerLock)); err != nil {
		return classify(err)
	}
	if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+db.marker()+
		" (table_name text PRIMARY KEY, created_at timestamptz, dbprobe_version text, "+identityColumn+" text)"); err != nil {
		return classify(err)
	}
	return db.addIdentityColumn(ctx, tx)
}

// createError is the error of a CREATE TABLE: bad input when the table
// exists.
func (db *DB) createError(err error, table string) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P07" {
		return badinput.New("%w; drop it or choose another table name",
			&driver.Scrubbed{Msg: "table " + table + " already exists", Err: classify(err)})
	}
	return classify(err)
}

// checkProcedureNames refuses a table whose function names PostgreSQL
// would cut short.
func checkProcedureNames(t driver.Table) error {
	if procedureNamesFit(t) {
		return nil
	}
	return badinput.New("table name %s is too long for the procedure path: its function %s would pass PostgreSQL's %d-byte limit on names; use a table name of at most %d bytes or --op-path statement",
		t.Name, foldName(driver.Procedures(t).Update), maxIdentifier, maxIdentifier-len(foldName(driver.Procedures(driver.Table{}).Update)))
}

// dropProcedures drops every function named like one of the table's on the
// procedure path, whatever its arguments, in the current schema: a
// function of an older shape of the table goes too.
func dropProcedures(ctx context.Context, tx pgx.Tx, t driver.Table) error {
	rows, err := tx.Query(ctx,
		`SELECT p.oid::regprocedure::text FROM pg_proc p
		 WHERE p.pronamespace = to_regnamespace(current_schema()) AND p.proname = ANY($1::text[])`,
		procedureNames(t))
	if err != nil {
		return classify(err)
	}
	sigs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return classify(err)
	}
	for _, sig := range sigs {
		// regprocedure's text is already quoted where it needs to be.
		if _, err := tx.Exec(ctx, "DROP FUNCTION IF EXISTS "+sig); err != nil {
			return classify(err)
		}
	}
	return nil
}

// createProcedures replaces the table's functions with ones of its shape.
func createProcedures(ctx context.Context, tx pgx.Tx, d *dialect, t driver.Table) error {
	if err := dropProcedures(ctx, tx, t); err != nil {
		return err
	}
	for _, ddl := range d.createProcedures() {
		if _, err := tx.Exec(ctx, ddl); err != nil {
			return fmt.Errorf("postgres: create the procedure path's functions: %w", classify(err))
		}
	}
	return nil
}

// ensureProcedures makes sure the table's functions exist before a session
// on the procedure path prepares calls to them: a table loaded on the
// statement path has none yet. A DB looks once per table; the check and
// the creation run under the marker table's lock, so that two clients
// starting together create them once.
func (db *DB) ensureProcedures(ctx context.Context, t driver.Table) error {
	if err := checkProcedureNames(t); err != nil {
		return err
	}
	name := foldName(t.Name)
	db.procMu.Lock()
	defer db.procMu.Unlock()
	if db.procReady[name] {
		return nil
	}
	d := newDialect(db.schema, t)
	sigs := d.procedureSignatures()
	present := func(q interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}) (bool, error) {
		var n int
		err := q.QueryRow(ctx, "SELECT count(to_regprocedure(s)) FROM unnest($1::text[]) AS s", sigs).Scan(&n)
		return n == len(sigs), err
	}
	ok, err := present(db.pool)
	if err != nil {
		return classify(err)
	}
	if !ok {
		err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(markerLock)); err != nil {
				return classify(err)
			}
			if ok, err := present(tx); err != nil || ok {
				return classify(err)
			}
			return createProcedures(ctx, tx, d, t)
		})
		if err != nil {
			return err
		}
	}
	db.procReady[name] = true
	return nil
}

// DropTable drops a table dbprobe recorded creating, and forgets it. It
// refuses any other table and never cascades.
func (db *DB) DropTable(ctx context.Context, t driver.Table) error {
	if err := driver.CheckTable(t); err != nil {
		return err
	}
	d := newDialect(db.schema, t)
	name := foldName(t.Name)
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(markerLock)); err != nil {
			return classify(err)
		}
		own, err := db.ownership(ctx, tx, name)
		if err != nil {
			return err
		}
		// A recorded table that is gone leaves its row and maybe its
		// functions, which go.
		if !own.Owned() && !(own.Recorded && own.CurrentIdentity == "") {
			if note := own.Note(); note != "" {
				return badinput.New("refusing to drop table %s: %s", d.table, note)
			}
			return badinput.New("refusing to drop table %s: dbprobe did not create it (it is not in %s); drop it yourself or choose another table name",
				d.table, markerTable)
		}
		// The procedure path's functions go first, whatever the path of
		// this DB: a table loaded by one run may have been run on by
		// another with functions. Their bodies name the table, but
		// PostgreSQL does not record that, so dropping the table alone
		// would leave them behind.
		if err := dropProcedures(ctx, tx, t); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DROP TABLE IF EXISTS "+d.table); err != nil {
			return classify(err)
		}
		_, err = tx.Exec(ctx, "DELETE FROM "+db.marker()+" WHERE table_name = $1", name)
		return classify(err)
	})
	if err == nil {
		db.procMu.Lock()
		delete(db.procReady, name)
		db.procMu.Unlock()
	}
	return err
}

// version is dbprobe's own version as the build recorded it.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "unknown"
}

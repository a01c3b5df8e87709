package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqltext"
)

const libraryPath = "github.com/microsoft/go-mssqldb"

// openTimeout bounds Open's first round trips, the login included (see
// boundedConnector), when the caller's context has no deadline, so that a
// server that accepts connections and never answers fails in bounded time.
const openTimeout = 30 * time.Second

// restoreTimeout bounds how long Close spends putting database options back:
// Close runs on Ctrl-C too, and must not hang on a server that went away.
const restoreTimeout = 30 * time.Second

func init() {
	dbdriver.Register("sqlserver", Driver{}, "mssql", "azuresql")
}

// Driver opens SQL Server and Azure SQL databases through go-mssqldb.
type Driver struct{}

// DB is an open SQL Server database: a database/sql pool sized to the
// sessions, and the database options Open changed, to put back at Close.
type DB struct {
	pool   *sql.DB
	opts   dbdriver.Options
	schema string
	info   dbdriver.Info

	mu      sync.Mutex
	applied []change              // options Open changed; nil once put back
	open    map[*session]struct{} // sessions not yet closed
	closed  bool
	// wrote holds the tables sessions inserted rows into since their
	// procedures were last recompiled (session.Close); created, the tables
	// this DB created, whose BUCKET_COUNT it asked for.
	wrote   map[string]bool
	created map[string]bool

	// connector opens the monitor's connection, in a pool of its own so
	// that it takes none of the sessions' and the table lifecycle's.
	connector driver.Connector

	// sqlOpen hands out SQL text's connections (SQLOptions); made at the
	// first, under mu.
	sqlOpen *sqltext.Opener
}

// Open connects to target, proves the server answers and the credentials
// work, checks that the database can do what opts asks, applies the
// durability and memory-table options, and reads them back.
func (Driver) Open(ctx context.Context, target dbdriver.Target, opts dbdriver.Options) (dbdriver.DB, error) {
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	cfg, err := parseURL(target)
	if err != nil {
		return nil, err
	}
	connector, err := newConnector(cfg)
	if err != nil {
		return nil, badinput.New("--db %s: %w", target.Redacted(), &dbdriver.Scrubbed{Msg: target.ScrubConnect(firstLine(err.Error())), Err: err})
	}
	pool := sql.OpenDB(connector)
	// Each session holds a connection of its own; two more serve the table
	// lifecycle and a session creating missing procedures at the same time.
	conns := max(opts.Sessions, 1) + 2
	pool.SetMaxOpenConns(conns)
	pool.SetMaxIdleConns(conns)

	// bounded bounds a context by openTimeout when the caller set no
	// deadline.
	bounded := func(ctx context.Context) (context.Context, context.CancelFunc) {
		if _, ok := ctx.Deadline(); ok {
			return ctx, func() {}
		}
		return context.WithTimeout(ctx, openTimeout)
	}
	// A database not currently available (40613: failover, scaling,
	// serverless resume) is waited for a while, each try bounded.
	st, tries, waited, err := readStateRetrying(ctx, func(ctx context.Context) (dbState, error) {
		ctx, cancel := bounded(ctx)
		defer cancel()
		return readState(ctx, pool)
	}, sleepCtx)
	ctx, cancel := bounded(ctx)
	defer cancel()
	if errors.Is(err, sql.ErrNoRows) {
		// The login worked and the server answered: not a credentials
		// problem, whatever the authentication.
		pool.Close()
		return nil, fmt.Errorf("sqlserver: sys.databases at %s shows no row named DB_NAME() (database %q), so its options cannot be read; check that the login's database is online", cfg.addr, cfg.database)
	}
	if err != nil {
		pool.Close()
		if u := unavailableError(err, cfg, tries, waited); u != nil {
			return nil, u
		}
		return nil, openError(err, target, cfg)
	}
	if opts.TableType != dbdriver.TableDisk {
		if err := memorySupport(st, opts.TableType); err != nil {
			pool.Close()
			return nil, err
		}
	}
	db := &DB{pool: pool, opts: opts, schema: st.schema, open: map[*session]struct{}{}, connector: connector,
		wrote: map[string]bool{}, created: map[string]bool{}}
	changes, err := planChanges(opts, st)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if len(changes) > 0 && !st.canAlter {
		pool.Close()
		return nil, permissionError(st, changes[0])
	}
	if err := db.apply(ctx, st, changes); err != nil {
		pool.Close()
		return nil, err
	}
	if len(changes) > 0 {
		if st, err = readState(ctx, pool); err != nil {
			db.Close()
			return nil, classify(err)
		}
		if err := checkApplied(st, changes); err != nil {
			db.Close()
			return nil, err
		}
	}
	// The options of a session as the workers' will have them, read from
	// one of the pool's connections.
	ss, err := readSession(ctx, pool)
	if err != nil {
		db.Close()
		return nil, classify(err)
	}
	db.info = dbdriver.Info{
		Driver:        "sqlserver",
		Product:       product(st.engineEdition),
		Library:       "go-mssqldb " + dbdriver.ModuleVersion(libraryPath),
		ServerVersion: serverVersion(st.version, st.engineEdition),
		Settings: append(append(settings(st, opts, changes, cfg.auth()), sessionSettings(ss, st, opts)...),
			dbdriver.Setting{Name: "tls", Value: cfg.tls}),
	}
	return db, nil
}

// checkOptions refuses knob values this driver does not know, before
// anything touches the server.
func checkOptions(opts dbdriver.Options) error {
	switch opts.TableType {
	case dbdriver.TableDisk, dbdriver.TableMemory, dbdriver.TableNondurable:
	default:
		return badinput.New("SQL Server has no table type %v; use disk, memory or nondurable", opts.TableType)
	}
	switch opts.Durability {
	case dbdriver.DurabilityServer, dbdriver.DurabilityFull, dbdriver.DurabilityDelayed:
	default:
		return badinput.New("SQL Server has no durability %v; use server, full or delayed", opts.Durability)
	}
	switch opts.DurabilityScope {
	case dbdriver.ScopeDatabase, dbdriver.ScopeTransaction:
	default:
		return badinput.New("SQL Server has no durability scope %v; use database or transaction", opts.DurabilityScope)
	}
	switch opts.OpPath {
	case dbdriver.PathStatement, dbdriver.PathProcedure:
	default:
		return badinput.New("SQL Server has no operation path %v; use statement or procedure", opts.OpPath)
	}
	if opts.BucketCount > maxBucketCount {
		return badinput.New("bucket count %d is above SQL Server's limit of %d (2^30); choose a smaller one", opts.BucketCount, maxBucketCount)
	}
	return nil
}

// apply makes the changes in order. When one fails, those made before it
// are put back, so that Open either changes everything it must or nothing;
// a missing permission is bad input.
func (db *DB) apply(ctx context.Context, st dbState, changes []change) error {
	for i, c := range changes {
		if _, err := db.pool.ExecContext(ctx, c.apply); err != nil {
			db.mu.Lock()
			db.applied = changes[:i]
			db.mu.Unlock()
			restoreErr := db.restore()
			if anyNumber(err, isPermissionError) {
				return errors.Join(permissionError(st, c), restoreErr)
			}
			return errors.Join(fmt.Errorf("sqlserver: %s: %w", c.apply, classify(err)), restoreErr)
		}
		db.mu.Lock()
		db.applied = changes[:i+1]
		db.mu.Unlock()
	}
	return nil
}

// checkApplied compares the options read back after apply with what was
// set: a database that reports another value (a policy, a trigger, a
// service that ignores the option) must not be measured as if it took it.
func checkApplied(st dbState, changes []change) error {
	for _, c := range changes {
		got := st.delayedDurability
		if c.option == "MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT" {
			got = onOff(st.elevateToSnapshot)
		}
		if !strings.EqualFold(got, c.to) {
			return fmt.Errorf("sqlserver: database %q reports %s = %s after dbprobe set it to %s; not running with a setting the server did not take",
				st.database, c.option, got, c.to)
		}
	}
	return nil
}

// restore puts back the options Open changed, within restoreTimeout.
func (db *DB) restore() error {
	ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
	defer cancel()
	return db.RestoreSettings(ctx)
}

var _ dbdriver.SettingsRestorer = (*DB)(nil)

// RestoreSettings puts back the database options Open changed, newest
// first, each only while it still holds dbprobe's value. It runs once: a
// second call, Close's included, finds nothing to do.
func (db *DB) RestoreSettings(ctx context.Context) error {
	db.mu.Lock()
	changes := db.applied
	db.applied = nil
	db.mu.Unlock()
	if len(changes) == 0 {
		return nil
	}
	var errs []error
	for i := len(changes) - 1; i >= 0; i-- {
		var found sql.NullString
		if err := db.pool.QueryRowContext(ctx, changes[i].restore).Scan(&found); err != nil {
			errs = append(errs, fmt.Errorf("sqlserver: put %s back to %s: %w", changes[i].option, changes[i].from, classify(err)))
			continue
		}
		errs = append(errs, restoreOutcome(changes[i], found))
	}
	return errors.Join(errs...)
}

// Info describes the driver, the server and its settings. Inspect may
// update the bucket count after Open.
func (db *DB) Info() dbdriver.Info {
	db.mu.Lock()
	defer db.mu.Unlock()
	info := db.info
	info.Settings = append([]dbdriver.Setting(nil), db.info.Settings...)
	return info
}

// noteBuckets puts the bucket count the server uses for a
// memory-optimized table, read back from sys.hash_indexes, into Info's
// bucket_count in place of the one asked for.
func (db *DB) noteBuckets(table string, buckets int64) {
	db.mu.Lock()
	defer db.mu.Unlock()
	value := bucketSetting(table, buckets, bucketCount(db.opts), db.created[table])
	for i, s := range db.info.Settings {
		if s.Name == "bucket_count" {
			db.info.Settings[i].Value = value
			return
		}
	}
	db.info.Settings = append(db.info.Settings, dbdriver.Setting{Name: "bucket_count", Value: value})
}

// Close closes the sessions still open, puts back the database options
// Open changed, and closes the pool. It is safe to call more than once.
//
// Two DBs on one database share its options: the one that changed an
// option puts it back when it closes, even while the other (which found the
// option already set and changed nothing) still runs, so clients that run
// together should be closed together.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
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
	err := db.restore()
	if op := db.opener(); op != nil {
		op.Close()
	}
	return errors.Join(err, db.pool.Close())
}

// markers returns the marker table statements of the DB's schema.
func (db *DB) markers() markers { return newMarkers(db.schema) }

// Inspect reports whether the table exists, whether dbprobe recorded
// creating it, whether it holds rows, its columns, and how it is stored.
func (db *DB) Inspect(ctx context.Context, t dbdriver.Table) (dbdriver.TableState, error) {
	if err := dbdriver.CheckTable(t); err != nil {
		return dbdriver.TableState{}, err
	}
	var st dbdriver.TableState
	d := newDialect(db.schema, t)
	var memory bool
	var durability, baseIndex string
	var buckets int64
	err := db.pool.QueryRowContext(ctx, d.tableState()).Scan(&memory, &durability, &baseIndex, &buckets)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, classify(err)
	}
	st.Exists = true
	st.Type, st.Storage = tableType(memory, durability, baseIndex, buckets)
	if memory && buckets > 0 {
		db.noteBuckets(t.Name, buckets)
	}

	if st.Columns, err = db.columns(ctx, d); err != nil {
		return st, err
	}

	own, err := db.ownership(ctx, db.pool, d, t.Name)
	if err != nil {
		return st, err
	}
	st.CreatedByDbprobe, st.OwnershipNote = own.Owned(), own.Note()

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

// columns reads the table's column names in order.
func (db *DB) columns(ctx context.Context, d *dialect) ([]string, error) {
	rows, err := db.pool.QueryContext(ctx, d.columns())
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, classify(err)
		}
		out = append(out, name)
	}
	return out, classify(rows.Err())
}

// tableType reads a table's type and storage from its catalog row: a
// memory-optimized table is nondurable when its durability is SCHEMA_ONLY.
func tableType(memory bool, durability, baseIndex string, buckets int64) (dbdriver.TableType, string) {
	if !memory {
		storage := "disk-based"
		if baseIndex != "" {
			storage += ", " + baseIndex
		}
		return dbdriver.TableDisk, storage
	}
	storage := "MEMORY_OPTIMIZED = ON, DURABILITY = " + durability
	if buckets > 0 {
		storage += fmt.Sprintf(", hash BUCKET_COUNT = %d", buckets)
	}
	if strings.EqualFold(durability, "SCHEMA_ONLY") {
		return dbdriver.TableNondurable, storage
	}
	return dbdriver.TableMemory, storage
}

// rowQuerier is the pool or one connection of it.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ownership reads what the marker table says about the table and the
// table's identity now (dialect.identity). A user who may not see the
// marker table sees the table as not dbprobe's.
func (db *DB) ownership(ctx context.Context, q rowQuerier, d *dialect, name string) (dbdriver.Ownership, error) {
	m := db.markers()
	own := dbdriver.Ownership{Marker: qualify(db.schema, markerTable)}
	var current sql.NullString
	if err := q.QueryRowContext(ctx, d.identity()).Scan(&current); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return own, classify(err)
	}
	own.CurrentIdentity = current.String
	var marker, withIdentity int
	if err := q.QueryRowContext(ctx, m.shape()).Scan(&marker, &withIdentity); err != nil || marker == 0 {
		return own, classify(err)
	}
	query := m.recordedLegacy()
	if withIdentity == 1 {
		query = m.recorded()
	}
	err := q.QueryRowContext(ctx, query, name).Scan(&own.RecordedIdentity)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return own, nil
	case err != nil:
		return own, classify(err)
	}
	own.Recorded = true
	return own, nil
}

// lifecycle runs fn on a connection that holds the lifecycle lock, so that
// two clients (or sessions) changing tables and procedures do not race.
func (db *DB) lifecycle(ctx context.Context, fn func(c *sql.Conn) error) error {
	c, err := db.pool.Conn(ctx)
	if err != nil {
		return classify(err)
	}
	defer c.Close()
	var got int
	if err := c.QueryRowContext(ctx, getLifecycle).Scan(&got); err != nil {
		return classify(err)
	}
	if got < 0 {
		return fmt.Errorf("sqlserver: could not take the lock %s that serialises table changes (sp_getapplock returned %d): another dbprobe holds it", lifecycleLock, got)
	}
	defer func() {
		// A lock left behind (this failing) goes with the connection.
		if _, err := c.ExecContext(context.WithoutCancel(ctx), releaseLifecycle); err != nil {
			_ = c.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return fn(c)
}

// CreateTable creates the table, records it in the marker table and, on the
// procedure path, creates its procedures. Memory-optimized tables cannot be
// created inside a transaction, so the steps are not one: when a later step
// fails, the earlier ones are undone.
func (db *DB) CreateTable(ctx context.Context, t dbdriver.Table) error {
	if err := dbdriver.CheckTable(t); err != nil {
		return err
	}
	d := newDialect(db.schema, t)
	return db.lifecycle(ctx, func(c *sql.Conn) error {
		err := db.createRecorded(ctx, c, t, func() error {
			_, err := c.ExecContext(ctx, d.createTable(db.opts.TableType, bucketCount(db.opts)))
			return err
		}, func() error {
			if db.opts.OpPath == dbdriver.PathProcedure {
				return createProcedures(ctx, c, d, db.opts.TableType != dbdriver.TableDisk)
			}
			return nil
		})
		if err == nil {
			db.mu.Lock()
			db.created[t.Name] = true
			db.mu.Unlock()
		}
		return err
	})
}

// createProcedures drops any procedure left under the table's procedure
// names and creates them anew: natively compiled for a memory-optimized
// table, interpreted for a disk table.
func createProcedures(ctx context.Context, c *sql.Conn, d *dialect, native bool) error {
	for _, q := range d.dropProcedures() {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return classify(err)
		}
	}
	for _, q := range d.createProcedures(native) {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("sqlserver: create procedure: %w", classify(err))
		}
	}
	return nil
}

// DropTable drops a table dbprobe recorded creating, with its procedures,
// and forgets it. It refuses any other table.
func (db *DB) DropTable(ctx context.Context, t dbdriver.Table) error {
	if err := dbdriver.CheckTable(t); err != nil {
		return err
	}
	d := newDialect(db.schema, t)
	m := db.markers()
	return db.lifecycle(ctx, func(c *sql.Conn) error {
		own, err := db.ownership(ctx, c, d, t.Name)
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
				d.table, qualify(db.schema, markerTable))
		}
		// Natively compiled procedures are bound to the table: they go first.
		for _, q := range d.dropProcedures() {
			if _, err := c.ExecContext(ctx, q); err != nil {
				return classify(err)
			}
		}
		if _, err := c.ExecContext(ctx, d.dropTable()); err != nil {
			return classify(err)
		}
		_, err = c.ExecContext(ctx, m.forget(), t.Name)
		return classify(err)
	})
}

// version is dbprobe's own version as the build recorded it.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "unknown"
}

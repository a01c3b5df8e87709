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

	"dbprobe/internal/badinput"
	"dbprobe/internal/driver"
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

// settingNames are the server settings that shape the numbers, read back at
// Open and reported in Info.
var settingNames = []string{"synchronous_commit", "fsync", "wal_level", "shared_buffers", "max_connections", "full_page_writes"}

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
	info       driver.Info
	schema     string // current_schema() of the pool's connections, "" if none
	seq        atomic.Uint64

	mu   sync.Mutex
	open map[*session]struct{} // sessions not yet closed
}

// Open connects to target, proves the server answers and the credentials
// work, and reads back the server's version and settings.
func (Driver) Open(ctx context.Context, target driver.Target, opts driver.Options) (driver.DB, error) {
	if target.URL == nil {
		return nil, badinput.New("no PostgreSQL URL; give one such as postgres://user@127.0.0.1:5432/bench")
	}
	cfg, err := pgxpool.ParseConfig(target.URL.String())
	if err != nil {
		return nil, badinput.New("--db %s is not a valid PostgreSQL URL: %w; write it as postgres://user@host:port/database?sslmode=disable",
			target.Redacted(), &scrubbed{msg: target.Scrub(parseReason(err)), err: err})
	}
	cc := cfg.ConnConfig
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
	db := &DB{pool: pool, opts: opts, connConfig: cc.Config.Copy(), open: map[*session]struct{}{}}
	if err := db.readInfo(ctx); err != nil {
		pool.Close()
		return nil, openError(err, target, cc.User, cc.Database, addr)
	}
	return db, nil
}

// parseReason returns why pgx could not parse a connection string, without
// the string itself.
func parseReason(err error) string {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		msg := pe.Error()
		if i := strings.LastIndex(msg, "`: "); i >= 0 {
			return msg[i+3:]
		}
	}
	return lastPart(err.Error())
}

// readInfo runs the first statement on a fresh connection, so a wrong
// password or an unreachable server fails here, and fills Info.
func (db *DB) readInfo(ctx context.Context) error {
	var q strings.Builder
	q.WriteString("SELECT coalesce(current_schema(), ''), current_setting('server_version')")
	for _, n := range settingNames {
		q.WriteString(", current_setting('")
		q.WriteString(n)
		q.WriteString("')")
	}
	values := make([]string, len(settingNames))
	dest := []any{&db.schema, &db.info.ServerVersion}
	for i := range values {
		dest = append(dest, &values[i])
	}
	if err := db.pool.QueryRow(ctx, q.String()).Scan(dest...); err != nil {
		return err
	}
	db.info.Driver = "postgres"
	db.info.Library = libraryPath + " " + driver.ModuleVersion(libraryPath)
	for i, n := range settingNames {
		db.info.Settings = append(db.info.Settings, driver.Setting{Name: n, Value: values[i]})
	}
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
	var st driver.TableState
	name := foldName(t.Name)
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
	var markerExists bool
	err = db.pool.QueryRow(ctx,
		`SELECT to_regclass(format('%I.%I', current_schema(), $1::text)) IS NOT NULL,
		        to_regclass(format('%I.%I', current_schema(), $2::text)) IS NOT NULL`,
		name, markerTable).Scan(&st.Exists, &markerExists)
	if err != nil {
		return st, classify(err)
	}
	if !st.Exists {
		st.Columns = nil
		return st, nil
	}
	if markerExists {
		err = db.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+db.marker()+" WHERE table_name = $1)", name).
			Scan(&st.CreatedByDbprobe)
		if err != nil {
			return st, classify(err)
		}
	}
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

// markerLock is the advisory lock key that serialises dbprobe's changes to
// the marker table, so two clients creating tables at once do not race on
// CREATE TABLE IF NOT EXISTS (which is not safe against itself).
const markerLock = 0x6462_7072_6f62_65 // "dbprobe"

// CreateTable creates the table and records it in the marker table, in one
// transaction: either both happen or neither.
func (db *DB) CreateTable(ctx context.Context, t driver.Table) error {
	d := newDialect(db.schema, t)
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(markerLock)); err != nil {
			return classify(err)
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+db.marker()+
			" (table_name text PRIMARY KEY, created_at timestamptz, dbprobe_version text)"); err != nil {
			return classify(err)
		}
		if _, err := tx.Exec(ctx, d.createTable(t.KeyLength, t.FieldLength)); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "42P07" {
				return badinput.New("%w; drop it or choose another table name",
					&scrubbed{msg: "table " + d.table + " already exists", err: classify(err)})
			}
			return classify(err)
		}
		// A row left by a table someone else dropped is replaced.
		_, err := tx.Exec(ctx, "INSERT INTO "+db.marker()+" (table_name, created_at, dbprobe_version) VALUES ($1, now(), $2)"+
			" ON CONFLICT (table_name) DO UPDATE SET created_at = excluded.created_at, dbprobe_version = excluded.dbprobe_version",
			foldName(t.Name), version())
		return classify(err)
	})
}

// DropTable drops a table dbprobe recorded creating, and forgets it. It
// refuses any other table and never cascades.
func (db *DB) DropTable(ctx context.Context, t driver.Table) error {
	d := newDialect(db.schema, t)
	name := foldName(t.Name)
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(markerLock)); err != nil {
			return classify(err)
		}
		var markerExists bool
		if err := tx.QueryRow(ctx, "SELECT to_regclass(format('%I.%I', current_schema(), $1::text)) IS NOT NULL", markerTable).
			Scan(&markerExists); err != nil {
			return classify(err)
		}
		recorded := false
		if markerExists {
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+db.marker()+" WHERE table_name = $1)", name).
				Scan(&recorded); err != nil {
				return classify(err)
			}
		}
		if !recorded {
			return badinput.New("refusing to drop table %s: dbprobe did not create it (it is not in %s); drop it yourself or choose another table name",
				d.table, markerTable)
		}
		if _, err := tx.Exec(ctx, "DROP TABLE IF EXISTS "+d.table); err != nil {
			return classify(err)
		}
		_, err := tx.Exec(ctx, "DELETE FROM "+db.marker()+" WHERE table_name = $1", name)
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

package sqlite

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqltext"
)

func init() {
	driver.Register("sqlite", Driver{}, "sqlite3")
}

// Driver opens SQLite databases. It is registered as "sqlite", with
// "sqlite3" as a second URL scheme.
type Driver struct{}

// Open opens (creating when missing) the database the target names, sets
// every connection up as the URL asks, and reads the settings back.
func (Driver) Open(ctx context.Context, target driver.Target, opts driver.Options) (driver.DB, error) {
	cfg, err := parseTarget(target.URL)
	if err != nil {
		return nil, err
	}
	return open(ctx, cfg, opts)
}

// filesPerConnection is how many file descriptors one connection to a
// database file holds: the file and its WAL (counted on Linux with 100
// connections: 2.00 each in WAL mode; 1 in DELETE mode, and the journal
// while it writes).
const filesPerConnection = 2

// Profile says, before anything is opened, that SQLite runs in dbprobe's
// process, its sessions each holding files there (none for an in-memory
// database), with nothing it lacks whatever the build (its capabilities are said once it is open).
func (Driver) Profile(t driver.Target) driver.Profile {
	p := driver.Profile{Database: "SQLite", Placement: driver.PlacementEmbedded}
	if cfg, err := parseTarget(t.URL); err == nil && !cfg.memory {
		p.FilesPerSession = filesPerConnection
		p.Files = "its database file and its WAL or journal"
	}
	return p
}

// memoryName numbers the in-memory databases of this process: each DB gets
// its own, shared by its connections and by no other DB.
var memoryName atomic.Uint64

// applyKnobs refuses the knobs SQLite does not have and turns the others
// into the configuration, before anything is opened.
func applyKnobs(cfg config, opts driver.Options) (config, error) {
	switch {
	case opts.TableType == driver.TableNondurable:
		return cfg, driver.Unsupported("SQLite", "non-durable table (--table-type nondurable)",
			"use --table-type memory (an in-memory database) or --durability delayed (synchronous=OFF)")
	case opts.OpPath == driver.PathProcedure:
		return cfg, driver.Unsupported("SQLite", "stored procedures (--op-path procedure)", "use --op-path statement")
	case opts.DurabilityScope == driver.ScopeTransaction:
		return cfg, driver.Unsupported("SQLite", "per-transaction durability (--durability-scope transaction)",
			"PRAGMA synchronous applies to the whole connection: use --durability-scope database")
	}
	if opts.TableType == driver.TableMemory && !cfg.memory {
		// The database itself goes to memory: SQLite has no in-memory
		// table inside a file database, only in-memory databases.
		cfg.memory, cfg.unusedPath, cfg.path = true, cfg.path, ""
		if !cfg.journalModeSet {
			cfg.journalMode = ""
		}
	}
	want := ""
	switch opts.Durability {
	case driver.DurabilityFull:
		// Every commit is synced before it returns; in WAL mode NORMAL
		// syncs only at checkpoints, so a power loss may take the last
		// commits.
		want = "FULL"
		if cfg.synchronousSet && (cfg.synchronous == "FULL" || cfg.synchronous == "EXTRA") {
			want = cfg.synchronous
		}
	case driver.DurabilityDelayed:
		// No sync at all: SQLite hands its writes to the operating system,
		// which writes them out when it will.
		want = "OFF"
	}
	if want != "" {
		if cfg.synchronousSet && cfg.synchronous != want {
			return cfg, badinput.New("sqlite: --durability %s asks for synchronous=%s, but the URL says synchronous=%s; remove one of them",
				opts.Durability, want, cfg.synchronous)
		}
		cfg.synchronous = want
	}
	return cfg, nil
}

func open(ctx context.Context, cfg config, opts driver.Options) (driver.DB, error) {
	cfg, err := applyKnobs(cfg, opts)
	if err != nil {
		return nil, err
	}
	var dsn, where, created string
	if cfg.memory {
		// cache=shared is what lets the connections of one DB see one
		// in-memory database; the name keeps two DBs apart.
		dsn = fmt.Sprintf("file:dbprobe-memory-%d-%d?mode=memory&cache=shared", os.Getpid(), memoryName.Add(1))
		where = memoryDatabase
		if cfg.unusedPath != "" {
			where += "; --table-type memory: the file " + cfg.unusedPath + " in the URL is not used"
		}
	} else {
		abs, missing, err := checkPath(cfg.path)
		if err != nil {
			return nil, err
		}
		mode := "rwc"
		if missing && !opts.Existing {
			created = abs
		}
		if opts.Existing {
			if missing {
				return nil, badinput.New("sqlite: there is no database at %s; load one first (dbprobe load --db %s) or give the file dbprobe load filled", abs, (&url.URL{Scheme: "sqlite", Path: filepath.ToSlash(abs)}).String())
			}
			// Not created should it vanish between the check and the open.
			mode = "rw"
		}
		dsn = fileURI(abs) + "?mode=" + mode + "&vfs=" + cfg.vfs
		where = abs
	}
	if opts := libraryDSN(cfg); opts != "" {
		dsn += "&" + opts
	}
	conn := &connector{drv: newLibraryDriver(), dsn: dsn, setup: setupPragmas(cfg)}
	// The pool serves the writer, the checkpointer and the DB's own
	// queries; sessions open connections of their own (see session).
	pool := sql.OpenDB(conn)

	d := &db{pool: pool, connector: conn, cfg: cfg, opts: opts, file: where, created: created}
	d.sqlOpen = &sqltext.Opener{Product: "SQLite", Pool: pool, Connector: func(simple bool) (sqldriver.Connector, error) {
		if simple {
			return nil, nil
		}
		return conn, nil
	}, SimpleMissing: noSimple}
	if cfg.memory {
		d.file = ""
	}
	if err := d.openWriter(ctx); err != nil {
		pool.Close()
		removeCreated(created)
		if cfg.memory {
			return nil, classify(err)
		}
		return nil, openError(cfg, err)
	}
	info, err := d.readInfo(ctx, where)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("sqlite: read settings back: %w", classify(err))
	}
	if err := d.startCheckpointer(ctx, &info); err != nil {
		d.Close()
		return nil, fmt.Errorf("sqlite: start the checkpointer: %w", classify(err))
	}
	info.Placement = driver.PlacementEmbedded
	d.info = info
	return d, nil
}

// memoryDatabase is how Info and Inspect name an in-memory database.
const memoryDatabase = ":memory: (an in-memory database, shared by this run's connections; its rows live only as long as the dbprobe process)"

// startCheckpointer moves WAL checkpoints off the writer (see
// checkpointer) when the database is in WAL mode, and says so in Info.
func (d *db) startCheckpointer(ctx context.Context, info *driver.Info) error {
	mode := ""
	for _, s := range info.Settings {
		if s.Name == "journal_mode" {
			mode = s.Value
		}
	}
	if !strings.EqualFold(mode, "wal") {
		return nil
	}
	cp, err := startCheckpointer(ctx, d.pool)
	if err != nil {
		return err
	}
	d.ckpt = cp
	err = d.w.call(ctx, false, func(c *sql.Conn) error {
		if _, err := c.ExecContext(ctx, "PRAGMA wal_autocheckpoint = "+strconv.Itoa(walRestartPages)); err != nil {
			return err
		}
		d.w.ckpt = cp
		return nil
	})
	if err != nil {
		return err
	}
	synced := ""
	if cp.files != nil {
		synced = ", each followed by a sync of the database file and the WAL"
	}
	info.Settings = append(info.Settings, driver.Setting{
		Name:  "checkpoints",
		Value: fmt.Sprintf("PASSIVE, in the background every %d records written%s; the writer finishes one at %d WAL pages (its wal_autocheckpoint)", checkpointEvery, synced, walRestartPages),
	})
	return nil
}

// checkPath makes the path absolute and names the usual mistakes before
// SQLite does, in words the user can act on. missing says whether no file
// is there yet: open decides from this one look both whether it creates
// the file (and so removes it at Close if it stays empty) and whether
// --existing can be honoured.
func checkPath(path string) (abs string, missing bool, err error) {
	abs, err = filepath.Abs(path)
	if err != nil {
		return "", false, badinput.New("sqlite: cannot resolve path %s: %v", path, err)
	}
	dir := filepath.Dir(abs)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", false, badinput.New("sqlite: directory %s does not exist; create it or give another path for the database", dir)
	case err != nil:
		return "", false, badinput.New("sqlite: cannot reach directory %s (%v); check the path and its permissions", dir, err)
	case !st.IsDir():
		return "", false, badinput.New("sqlite: %s is not a directory, so %s cannot be created there; give another path", dir, filepath.Base(abs))
	}
	st, err = os.Stat(abs)
	if err == nil && st.IsDir() {
		return "", false, badinput.New("sqlite: %s is a directory, not a database file; add a file name such as %s", abs, filepath.Join(abs, "bench.db"))
	}
	return abs, errors.Is(err, os.ErrNotExist), nil
}

// setupPragmas are run on every new connection, in this order: the busy
// timeout first so that switching the journal mode waits for other
// processes rather than failing. synchronous and (outside WAL) the journal
// mode belong to a connection, not to the file, so every connection needs
// them.
func setupPragmas(cfg config) []string {
	p := []string{"PRAGMA busy_timeout = " + strconv.Itoa(cfg.busyTimeoutMS)}
	if cfg.journalMode != "" {
		p = append(p, "PRAGMA journal_mode = "+cfg.journalMode)
	}
	p = append(p, "PRAGMA synchronous = "+cfg.synchronous)
	if cfg.memory {
		// Shared-cache connections lock whole tables: without this a read
		// would fail with LOCKED while the writer updates the same table.
		// Every write goes through one connection, so readers see only
		// committed statements anyway.
		p = append(p, "PRAGMA read_uncommitted = 1")
	}
	return p
}

// connector opens connections through the SQLite library and runs the
// setup pragmas on each, the same way for both libraries, which spell their
// DSN options differently.
type connector struct {
	drv   sqldriver.Driver
	dsn   string
	setup []string
}

// Connect opens one connection and sets it up.
func (c *connector) Connect(ctx context.Context) (sqldriver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	execer, ok := conn.(sqldriver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("sqlite: the library's connection cannot execute statements directly")
	}
	for _, q := range c.setup {
		if _, err := execer.ExecContext(ctx, q, nil); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	return conn, nil
}

// Driver returns the library's database/sql driver.
func (c *connector) Driver() sqldriver.Driver { return c.drv }

// db is an open SQLite database: a pool for the sessions' reads and one
// writer connection for every write.
type db struct {
	pool *sql.DB
	// connector opens the sessions' own connections, outside the pool.
	connector *connector
	cfg       config
	opts      driver.Options
	info      driver.Info
	w         writer
	ckpt      *checkpointer
	// file is the database file's absolute path; "" in memory.
	file string
	// created is file when this DB created it: Close removes it again
	// if it holds no table, so that a command refused after opening
	// (bad input) leaves no empty database behind.
	created string

	// sqlOpen hands out SQL text's connections (SQLOptions).
	sqlOpen *sqltext.Opener
}

// Info describes the library and the settings read back.
func (d *db) Info() driver.Info { return d.info }

func (d *db) readInfo(ctx context.Context, where string) (driver.Info, error) {
	var version, journal string
	var sync, busy, pageSize, cacheSize int
	c := d.w.conn
	for _, q := range []struct {
		sql  string
		dest any
	}{
		{"SELECT sqlite_version()", &version},
		{"PRAGMA journal_mode", &journal},
		{"PRAGMA synchronous", &sync},
		{"PRAGMA busy_timeout", &busy},
		{"PRAGMA page_size", &pageSize},
	} {
		if err := c.QueryRowContext(ctx, q.sql).Scan(q.dest); err != nil {
			return driver.Info{}, fmt.Errorf("%s: %w", q.sql, err)
		}
	}
	// The writer's cache is its own (see writer); a session's is SQLite's
	// default, read from a pooled connection.
	var writerCache int
	if err := c.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&writerCache); err != nil {
		return driver.Info{}, fmt.Errorf("PRAGMA cache_size: %w", err)
	}
	if err := d.pool.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&cacheSize); err != nil {
		return driver.Info{}, fmt.Errorf("PRAGMA cache_size: %w", err)
	}
	pragmas, err := readSessionPragmas(ctx, d.pool)
	if err != nil {
		return driver.Info{}, err
	}
	syncName := "unknown"
	if sync >= 0 && sync < len(synchronousLevels) {
		syncName = synchronousLevels[sync]
	}
	// The level the writer reads back is the one its commits run under:
	// anything but what was asked is an error, never a run measured under
	// the wrong setting.
	if syncName != d.cfg.synchronous {
		return driver.Info{}, fmt.Errorf("PRAGMA synchronous = %s was set, but SQLite reports %s (%d)", d.cfg.synchronous, syncName, sync)
	}

	settings := []driver.Setting{{Name: "database", Value: where}}
	if !d.cfg.memory {
		settings = append(settings, driver.Setting{Name: "vfs", Value: vfsText(d.cfg.vfs)})
	}
	settings = append(settings, []driver.Setting{
		{Name: "journal_mode", Value: journal},
		{Name: "synchronous", Value: fmt.Sprintf("%s (%d)", syncName, sync)},
		{Name: "durability", Value: durabilityText(d.opts.Durability, syncName, journal)},
		{Name: "busy_timeout", Value: strconv.Itoa(busy) + " ms"},
		{Name: "page_size", Value: strconv.Itoa(pageSize)},
		{Name: "cache_size", Value: cacheText(cacheSize)},
		{Name: "cache_size (writer)", Value: cacheText(writerCache)},
	}...)
	settings = append(settings, pragmas.settings(d.cfg.memory)...)
	// The writes are serialized by dbprobe, not by SQLite, and share
	// commits: say so, since it shapes every number with a write.
	settings = append(settings, driver.Setting{Name: "writes", Value: "serialized in dbprobe on one connection; writes waiting together share one commit", KeyValue: true})
	return driver.Info{
		Driver:        "sqlite",
		Product:       "SQLite",
		Library:       fmt.Sprintf("%s %s (%s), SQLite %s", libraryModule, driver.ModuleVersion(libraryModule), libraryKind, version),
		ServerVersion: version,
		Settings:      settings,
	}, nil
}

// vfsText says in Info what the VFS means for the file and for other
// processes.
func vfsText(vfs string) string {
	if vfs == vfsExclusive {
		return vfsExclusive + " (the file is locked to this process while dbprobe has it open, and the locks between its connections and the WAL index stay in memory; ?vfs=" + vfsShared + " lets other processes open it meanwhile)"
	}
	return vfs + " (SQLite's default: locks and the WAL index go through the file system, shared with any other process that opens the file)"
}

// durabilityText says in Info what the durability knob asked for and what
// the synchronous level read back means for a commit, in the journal mode
// read back.
func durabilityText(d driver.Durability, synchronous, journalMode string) string {
	var asked string
	switch d {
	case driver.DurabilityServer:
		asked = "server (the URL's or dbprobe's default synchronous)"
	default:
		asked = d.String() + " (--durability)"
	}
	var means string
	wal := strings.EqualFold(journalMode, "wal")
	switch {
	case strings.EqualFold(journalMode, "memory") || strings.EqualFold(journalMode, "off"):
		means = "nothing reaches a disk through the journal (journal_mode " + strings.ToLower(journalMode) + ")"
	case synchronous == "OFF":
		means = "commits are never synced: the operating system writes them out when it will, and a power loss or OS crash may lose or corrupt them"
	case synchronous == "NORMAL" && wal:
		means = "commits are synced only at checkpoints: a power loss may lose the last ones, a crash of the process loses none"
	case synchronous == "NORMAL":
		means = "the journal is synced less often than with FULL: a power loss may corrupt the database, though rarely"
	default:
		means = "every commit is synced before it returns"
	}
	return asked + ": synchronous=" + synchronous + ", " + means
}

// cacheText shows a cache_size: negative is a size in KiB, positive a
// number of pages.
func cacheText(n int) string {
	if n < 0 {
		return fmt.Sprintf("%d (%d KiB)", n, -n)
	}
	return strconv.Itoa(n) + " pages"
}

// Inspect reports what the database holds about the table.
func (d *db) Inspect(ctx context.Context, t driver.Table) (driver.TableState, error) {
	if err := driver.CheckTable(t); err != nil {
		return driver.TableState{}, err
	}
	var st driver.TableState
	exists, err := d.tableExists(ctx, t.Name)
	if err != nil {
		return st, err
	}
	if !exists {
		return st, nil
	}
	st.Exists = true
	own, err := ownership(ctx, d.pool, t.Name)
	if err != nil {
		return st, err
	}
	st.CreatedByDbprobe, st.OwnershipNote = own.Owned(), own.Note()
	var file, journal string
	if err := d.pool.QueryRowContext(ctx, mainFileSQL).Scan(&file); err != nil {
		return st, fmt.Errorf("sqlite: find the database of %s: %w", t.Name, classify(err))
	}
	if err := d.pool.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal); err != nil {
		return st, fmt.Errorf("sqlite: read the journal mode: %w", classify(err))
	}
	st.Type, st.Storage = tableStorage(file, journal)
	var one int
	switch err := d.pool.QueryRowContext(ctx, hasRowsSQL(t)).Scan(&one); {
	case err == nil:
		st.HasRows = true
	case !errors.Is(err, sql.ErrNoRows):
		return st, fmt.Errorf("sqlite: look for rows in %s: %w", t.Name, classify(err))
	}
	rows, err := d.pool.QueryContext(ctx, tableColumnsSQL, t.Name)
	if err != nil {
		return st, fmt.Errorf("sqlite: list the columns of %s: %w", t.Name, classify(err))
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return st, fmt.Errorf("sqlite: list the columns of %s: %w", t.Name, classify(err))
		}
		st.Columns = append(st.Columns, name)
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("sqlite: list the columns of %s: %w", t.Name, classify(err))
	}
	return st, nil
}

// tableStorage names how a table is stored from its database's file, as
// PRAGMA database_list gives it ("" for an in-memory database), and the
// journal mode.
func tableStorage(file, journalMode string) (driver.TableType, string) {
	if file == "" {
		return driver.TableMemory, "rowid table in an in-memory database: its rows live only as long as the dbprobe process"
	}
	return driver.TableDisk, "rowid table in the file " + file + " (journal_mode " + strings.ToLower(journalMode) + ")"
}

func (d *db) tableExists(ctx context.Context, name string) (bool, error) {
	var one int
	switch err := d.pool.QueryRowContext(ctx, tableExistsSQL, name).Scan(&one); {
	case err == nil:
		return true, nil
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	default:
		return false, fmt.Errorf("sqlite: look for table %s: %w", name, classify(err))
	}
}

// rowQuerier is the pool or one connection of it.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ownership reads what the marker table says about the table and the
// table's identity now (tableIdentitySQL).
func ownership(ctx context.Context, q rowQuerier, name string) (driver.Ownership, error) {
	own := driver.Ownership{Marker: markerTable, RebuiltBy: "VACUUM"}
	var current sql.NullString
	switch err := q.QueryRowContext(ctx, tableIdentitySQL, name).Scan(&current); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return own, fmt.Errorf("sqlite: read the identity of table %s: %w", name, classify(err))
	}
	own.CurrentIdentity = current.String
	var markers, withIdentity int
	if err := q.QueryRowContext(ctx, markerShapeSQL).Scan(&markers, &withIdentity); err != nil {
		return own, fmt.Errorf("sqlite: look for %s: %w", markerTable, classify(err))
	}
	if markers == 0 {
		return own, nil
	}
	query := selectLegacySQL
	if withIdentity > 0 {
		query = selectIdentitySQL
	}
	switch err := q.QueryRowContext(ctx, query, name).Scan(&own.RecordedIdentity); {
	case errors.Is(err, sql.ErrNoRows):
		return own, nil
	case err != nil:
		return own, fmt.Errorf("sqlite: look for table %s in %s: %w", name, markerTable, classify(err))
	}
	own.Recorded = true
	return own, nil
}

// addIdentityColumn gives a marker table an earlier dbprobe created the
// column for identities.
func addIdentityColumn(ctx context.Context, c *sql.Conn) error {
	var markers, withIdentity int
	if err := c.QueryRowContext(ctx, markerShapeSQL).Scan(&markers, &withIdentity); err != nil || withIdentity > 0 {
		return err
	}
	_, err := c.ExecContext(ctx, addIdentitySQL)
	return err
}

// CreateTable creates the table and records it in the marker table, in one
// transaction so that a table is never left unrecorded.
func (d *db) CreateTable(ctx context.Context, t driver.Table) error {
	if err := driver.CheckTable(t); err != nil {
		return err
	}
	id, err := driver.NewTableID()
	if err != nil {
		return err
	}
	if err := d.createRecorded(ctx, t.Name, func(c *sql.Conn) error {
		_, err := c.ExecContext(ctx, createTableSQL(t, id))
		return err
	}); err != nil {
		return fmt.Errorf("sqlite: create table %s: %w", t.Name, classify(err))
	}
	return nil
}

// createRecorded runs create, which creates table name, on the writer in
// one transaction with the row that records it in the marker table, so
// that a table is never left unrecorded.
func (d *db) createRecorded(ctx context.Context, name string, create func(c *sql.Conn) error) error {
	return d.w.transaction(ctx, func(c *sql.Conn) error {
		if _, err := c.ExecContext(ctx, createMarkerSQL); err != nil {
			return err
		}
		if err := addIdentityColumn(ctx, c); err != nil {
			return err
		}
		if err := create(c); err != nil {
			return err
		}
		var identity string
		if err := c.QueryRowContext(ctx, tableIdentitySQL, name).Scan(&identity); err != nil {
			return err
		}
		_, err := c.ExecContext(ctx, insertMarkerSQL, name, time.Now().UTC().Format(time.RFC3339), dbprobeVersion(), identity)
		return err
	})
}

// DropTable drops a table the marker table lists, and its row there. Any
// session on the table must be closed first: its statements go with it.
func (d *db) DropTable(ctx context.Context, t driver.Table) error {
	if err := driver.CheckTable(t); err != nil {
		return err
	}
	var refused *driver.Ownership
	err := d.w.transaction(ctx, func(c *sql.Conn) error {
		own, err := ownership(ctx, c, t.Name)
		if err != nil {
			return err
		}
		// A recorded table that is gone leaves its row, which goes.
		if !own.Owned() && !(own.Recorded && own.CurrentIdentity == "") {
			refused = &own
			return errRefused
		}
		// The table's prepared statements on this connection must go before
		// the table does.
		d.w.forget(t.Name)
		if _, err := c.ExecContext(ctx, dropTableSQL(t)); err != nil {
			return err
		}
		_, err = c.ExecContext(ctx, deleteMarkerSQL, t.Name)
		return err
	})
	if refused != nil {
		if note := refused.Note(); note != "" {
			return badinput.New("sqlite: refusing to drop table %s: %s", t.Name, note)
		}
		return badinput.New("sqlite: refusing to drop table %s: dbprobe did not create it (it is not listed in %s); drop it yourself if it should go", t.Name, markerTable)
	}
	if err != nil {
		return fmt.Errorf("sqlite: drop table %s: %w", t.Name, classify(err))
	}
	return nil
}

var errRefused = errors.New("table not created by dbprobe")

// Close closes the writer and every pooled connection. Sessions should be
// closed first.
func (d *db) Close() error {
	empty := false
	if d.created != "" {
		var n int
		// sqlite_master lists every table, index, view and trigger.
		empty = d.pool.QueryRowContext(context.Background(), "SELECT count(*) FROM sqlite_master").Scan(&n) == nil && n == 0
	}
	d.sqlOpen.Close()
	err := d.w.close()
	if d.ckpt != nil {
		if cerr := d.ckpt.close(); err == nil && cerr != nil {
			err = fmt.Errorf("sqlite: background checkpoint: %w", classify(cerr))
		}
	}
	if perr := d.pool.Close(); err == nil {
		err = perr
	}
	if d.ckpt != nil {
		d.ckpt.closeFiles()
	}
	if empty {
		removeCreated(d.created)
	}
	return err
}

// removeCreated removes a database file this process created, with the
// journal files SQLite keeps beside it.
func removeCreated(path string) {
	if path == "" {
		return
	}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + suffix)
	}
}

// dbprobeVersion is the version recorded with each table dbprobe creates.
func dbprobeVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "unknown"
}

// bg is the context handed to the SQLite library on the hot path. With a
// cancellable context both database/sql and the library start watching it
// for every statement (a goroutine or a callback per query, an allocation
// each); operations take microseconds, so the session checks its caller's
// context before each one instead, and between rows of long ones.
var bg = context.Background()

// lowerName is the key the writer files a table's statements under: SQLite
// compares identifiers without case.
func lowerName(name string) string { return strings.ToLower(name) }

package redis

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/rawnet"
)

// settingNames are the server settings that shape the numbers, read back
// with CONFIG GET at Open and reported in Info in this order: when a
// write reaches the disk (appendonly, appendfsync, save) and whether a
// write may evict records or fail for memory (maxmemory and its policy).
//
// Left out: io-threads and the other settings of how the server runs,
// which apply to every client alike and which INFO and the server's
// configuration show; Redis has no session settings.
var settingNames = []string{"appendonly", "appendfsync", "save", "maxmemory", "maxmemory-policy"}

// infoField is where INFO shows a setting, for a server that refuses
// CONFIG GET.
type infoField struct {
	section, field string
	flag           bool // 1 or 0, shown as yes or no
}

// inInfo are the settings INFO also shows.
var inInfo = map[string]infoField{
	"appendonly":       {section: "persistence", field: "aof_enabled", flag: true},
	"maxmemory":        {section: "memory", field: "maxmemory"},
	"maxmemory-policy": {section: "memory", field: "maxmemory_policy"},
}

// dropChunk is how many records DropTable deletes per round trip.
const dropChunk = 1000

// scanCount is the COUNT hint of the SCAN that looks for records dbprobe
// did not write: large enough that a big keyspace takes few round trips,
// small enough that each one blocks the server only briefly.
const scanCount = 1000

// restoreTimeout bounds putting appendfsync back in Close, which also runs
// when the user interrupts a run.
const restoreTimeout = 10 * time.Second

func init() {
	driver.Register("redis", Driver{}, "rediss")
}

// Driver opens Redis databases through redigo.
type Driver struct{}

// DB is an open Redis logical database: a pool of connections for its own
// calls and the sessions' load batches, and the connections the sessions
// keep for their operations.
type DB struct {
	pool     *redis.Pool
	connOpts *options
	own      sessionConns
	closed   atomic.Bool
	opts     driver.Options
	addr     string // host:port, for messages
	index    int    // the logical database number
	info     driver.Info

	// release puts appendfsync back as it was; nil when Open changed
	// nothing.
	release func(context.Context) error

	releaseOnce sync.Once
	releaseErr  error
	closeOnce   sync.Once
	closeErr    error
}

// checkKnobs refuses the knobs Redis does not have, before anything is
// sent to the server.
func checkKnobs(opts driver.Options) error {
	switch {
	case opts.TableType == driver.TableNondurable:
		return driver.Unsupported("Redis", "per-table durability (--table-type nondurable)",
			"persistence is server-wide: run the server with appendonly no")
	case opts.OpPath == driver.PathProcedure:
		return driver.Unsupported("Redis", "stored procedures (--op-path procedure)",
			"use --op-path statement; each operation already runs as one server-side script")
	case opts.DurabilityScope == driver.ScopeTransaction:
		return driver.Unsupported("Redis", "per-transaction durability (--durability-scope transaction)",
			"use --durability-scope database: appendfsync applies to the whole server")
	}
	switch opts.Durability {
	case driver.DurabilityServer, driver.DurabilityFull, driver.DurabilityDelayed:
	default:
		return badinput.New("unknown durability %v; use server, full or delayed", opts.Durability)
	}
	switch opts.TableType {
	case driver.TableDisk, driver.TableMemory:
	default:
		return badinput.New("unknown table type %v; use disk or memory", opts.TableType)
	}
	return nil
}

// Open connects to target, proves the server answers and the credentials
// work (PING), applies the durability asked for and reads back the
// server's version and settings.
func (Driver) Open(ctx context.Context, target driver.Target, opts driver.Options) (driver.DB, error) {
	if err := rawnet.Check(); err != nil {
		return nil, err
	}
	if err := checkKnobs(opts); err != nil {
		return nil, err
	}
	copts, tlsMode, err := clientOptions(target, opts.Sessions)
	if err != nil {
		return nil, err
	}
	db := &DB{connOpts: copts, opts: opts, addr: copts.addr, index: copts.db}
	db.pool = &redis.Pool{
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			// The pool dials under the context it waited with, which
			// pool_timeout bounds; the dial takes the caller's instead, so
			// that only dial_timeout bounds it.
			if caller, ok := ctx.Value(callerKey{}).(context.Context); ok {
				ctx = caller
			}
			return copts.dial(ctx, nil)
		},
		MaxActive:       copts.poolSize,
		MaxIdle:         copts.maxIdle,
		Wait:            true,
		IdleTimeout:     copts.idleTimeout,
		MaxConnLifetime: copts.maxConnAge,
	}
	if _, err := db.do(ctx, "PING"); err != nil {
		db.pool.Close()
		return nil, openError(err, target, copts.addr, copts.user, copts.db, copts.tls != nil)
	}
	if err := db.open(ctx); err != nil {
		db.Close()
		return nil, err
	}
	db.info.Settings = append(db.info.Settings, driver.Setting{Name: "tls", Value: tlsMode}, driver.Setting{Name: "raw socket calls", Value: rawnet.Setting()})
	return db, nil
}

// open reads the server's description, refuses a cluster, applies the
// durability and fills Info.
func (db *DB) open(ctx context.Context) error {
	db.info.Driver = "redis"
	db.info.Product = "Redis"
	db.info.Library = library()
	server, err := db.infoSection(ctx, "server")
	switch {
	case err != nil && isRefused(err):
		db.info.ServerVersion = "unknown (INFO refused: " + firstLine(err) + ")"
	case err != nil:
		return classify(err)
	default:
		db.info.ServerVersion = server["redis_version"]
		if mode := server["redis_mode"]; mode == "cluster" {
			return badinput.New("Redis at %s runs in cluster mode; dbprobe's Redis driver needs a standalone server (a record and its table's index change together in one script, so they must share a node)", db.addr)
		}
	}
	if err := db.applyDurability(ctx); err != nil {
		return err
	}
	db.info.Settings = db.readSettings(ctx)
	return nil
}

// infoSection returns one INFO section as a map.
func (db *DB) infoSection(ctx context.Context, section string) (map[string]string, error) {
	text, err := redis.String(db.do(ctx, "INFO", section))
	if err != nil {
		return nil, err
	}
	return parseInfo(text), nil
}

// parseInfo reads INFO's "name:value" lines; '#' lines head sections.
func parseInfo(text string) map[string]string {
	out := map[string]string{}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}

// config reads settings with CONFIG GET, one name per call (Redis before 7
// takes one pattern per CONFIG GET), in one round trip.
func (db *DB) config(ctx context.Context, names ...string) (map[string]string, error) {
	cmds := make([][]any, len(names))
	for i, n := range names {
		cmds[i] = []any{"CONFIG", "GET", n}
	}
	replies, err := db.pipeline(ctx, cmds...)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, n := range names {
		m, err := redis.StringMap(replies[i], nil)
		if err != nil {
			return nil, fmt.Errorf("CONFIG GET %s: %w", n, err)
		}
		v, ok := m[n]
		if !ok {
			return nil, fmt.Errorf("CONFIG GET %s: the server has no such setting", n)
		}
		out[n] = v
	}
	return out, nil
}

// fsyncFor is the appendfsync policy of each durability dbprobe sets.
var fsyncFor = map[driver.Durability]string{
	driver.DurabilityFull:    "always",
	driver.DurabilityDelayed: "everysec",
}

// applyDurability sets appendfsync for durability full or delayed, only
// when it differs, and keeps what Close needs to put it back. Anything that
// stops it is a badinput error raised before the server is changed.
func (db *DB) applyDurability(ctx context.Context) error {
	want, ok := fsyncFor[db.opts.Durability]
	if !ok {
		return nil // server: leave the setting as it is
	}
	cfg, err := db.config(ctx, "appendonly", "appendfsync")
	if err != nil {
		if isRefused(err) {
			return badinput.New("Redis at %s refused CONFIG GET: %w; --durability %s sets appendfsync with CONFIG SET: allow CONFIG for this user (ACL +config), or run with --durability server",
				db.addr, &driver.Scrubbed{Msg: firstLine(err), Err: err, Unchecked: true}, db.opts.Durability)
		}
		return classify(err)
	}
	if cfg["appendonly"] != "yes" {
		return badinput.New("Redis at %s: no write is durable: appendonly=%s; CONFIG SET appendonly yes or run with --durability server",
			db.addr, cfg["appendonly"])
	}
	release, err := holdAppendfsync(ctx, db, want, cfg["appendfsync"])
	if err != nil {
		if isRefused(err) {
			return badinput.New("Redis at %s refused CONFIG SET appendfsync %s: %w; allow CONFIG SET for this user (ACL +config|set), or run with --durability server",
				db.addr, want, &driver.Scrubbed{Msg: firstLine(err), Err: err, Unchecked: true})
		}
		return err
	}
	db.release = release
	got, err := db.config(ctx, "appendfsync")
	if err != nil {
		return classify(err)
	}
	if got["appendfsync"] != want {
		return fmt.Errorf("redis: appendfsync reads back as %q after CONFIG SET appendfsync %s", got["appendfsync"], want)
	}
	return nil
}

// isRefused reports an error reply that means the command may not run
// here: an ACL denial, a renamed or disabled command, a protected setting.
func isRefused(err error) bool {
	code, ok := serverCode(err)
	if !ok {
		return false
	}
	if code == "NOPERM" {
		return true
	}
	msg := strings.ToLower(err.Error())
	return code == "ERR" && (strings.Contains(msg, "unknown command") || strings.Contains(msg, "protected config") ||
		strings.Contains(msg, "unsupported config") || strings.Contains(msg, "can't set"))
}

// durabilityHold is appendfsync as dbprobe set it on one server, shared by
// the DBs of this process that asked for the same value, so that the first
// to change it remembers the original and the last to close puts it back.
type durabilityHold struct {
	refs     int
	previous string
	applied  string
}

var (
	holdsMu sync.Mutex
	holds   = map[string]*durabilityHold{} // by server address
)

// holdAppendfsync sets appendfsync to want on db's server unless it is
// there already, and returns the function that puts the previous value
// back when the last DB of this process that needed the change closes (nil
// when nothing was changed). It refuses a value that contradicts one an
// open DB of this process set: the server has only one.
func holdAppendfsync(ctx context.Context, db *DB, want, current string) (func(context.Context) error, error) {
	addr := db.addr
	holdsMu.Lock()
	defer holdsMu.Unlock()
	h := holds[addr]
	switch {
	case h != nil && h.applied != want:
		return nil, badinput.New("Redis at %s: another connection of this dbprobe set appendfsync %s, and this one asks for %s; the setting is server-wide: use one --durability at a time",
			addr, h.applied, want)
	case h != nil:
		h.refs++
	case current == want:
		return nil, nil
	default:
		if _, err := db.do(ctx, "CONFIG", "SET", "appendfsync", want); err != nil {
			return nil, err
		}
		h = &durabilityHold{refs: 1, previous: current, applied: want}
		holds[addr] = h
	}
	return func(ctx context.Context) error { return releaseAppendfsync(ctx, db, h) }, nil
}

// releaseAppendfsync drops one reference to h and, with the last, puts the
// previous appendfsync back unless someone else changed it meanwhile.
func releaseAppendfsync(ctx context.Context, db *DB, h *durabilityHold) error {
	holdsMu.Lock()
	defer holdsMu.Unlock()
	h.refs--
	if h.refs > 0 {
		return nil
	}
	delete(holds, db.addr)
	now, err := redis.StringMap(db.do(ctx, "CONFIG", "GET", "appendfsync"))
	if err != nil {
		return fmt.Errorf("redis: put appendfsync back to %s: %w", h.previous, err)
	}
	if now["appendfsync"] != h.applied {
		return nil // changed by someone else since: theirs now
	}
	if _, err := db.do(ctx, "CONFIG", "SET", "appendfsync", h.previous); err != nil {
		return fmt.Errorf("redis: put appendfsync back to %s: %w", h.previous, err)
	}
	return nil
}

// readSettings reads back the settings that shape the numbers, then says
// how the operations are isolated and committed. A server that refuses
// CONFIG GET still runs: each setting INFO shows comes from there, and
// each other one says CONFIG GET was refused.
func (db *DB) readSettings(ctx context.Context) []driver.Setting {
	var out []driver.Setting
	cfg, err := db.config(ctx, settingNames...)
	if err != nil {
		what := "failed"
		if isRefused(err) {
			what = "refused"
		}
		unknown := "unknown: CONFIG GET " + what + " (" + firstLine(err) + ")"
		sections := map[string]map[string]string{}
		for _, n := range settingNames {
			f, ok := inInfo[n]
			if !ok {
				out = append(out, driver.Setting{Name: n, Value: unknown})
				continue
			}
			sec, seen := sections[f.section]
			if !seen {
				sec, _ = db.infoSection(ctx, f.section) // nil when refused too
				sections[f.section] = sec
			}
			v, ok := sec[f.field]
			switch {
			case !ok:
				out = append(out, driver.Setting{Name: n, Value: unknown + "; INFO " + f.section + " has no " + f.field})
			case f.flag:
				out = append(out, driver.Setting{Name: n, Value: yesNo(v) + " (INFO " + f.section + " " + f.field + ")"})
			default:
				out = append(out, driver.Setting{Name: n, Value: settingText(n, v) + " (INFO " + f.section + " " + f.field + ")"})
			}
		}
	} else {
		for _, n := range settingNames {
			out = append(out, driver.Setting{Name: n, Value: settingText(n, cfg[n])})
		}
	}
	out = append(out,
		driver.Setting{Name: "transaction_isolation", Value: isolationText},
		driver.Setting{Name: "autocommit", Value: autocommitText(db.opts)})
	if db.release != nil {
		holdsMu.Lock()
		h := holds[db.addr]
		holdsMu.Unlock()
		if h != nil {
			out = append(out, driver.Setting{Name: "durability", Value: fmt.Sprintf(
				"%s: dbprobe set appendfsync %s (it was %s) and puts it back when it ends", db.opts.Durability, h.applied, h.previous)})
		}
	}
	return out
}

// isolationText is Redis's isolation: none to set, as the server runs one
// command or script at a time.
const isolationText = "none to set: the server runs one command or script at a time, so a read (HMGET) or a write (one script) sees and leaves no half-done operation; a scan's index read and its records' reads are separate commands"

// autocommitText says how each operation is applied: there are no
// transactions to commit, save a load batch's.
func autocommitText(opts driver.Options) string {
	batch := "WATCH, MULTI, the records' writes, EXEC"
	if opts.BulkLoad {
		batch = "one script"
	}
	return "no transactions: every operation is one command or one script, applied as it runs; a load batch is all or nothing (" + batch + ")"
}

// settingText shows a setting's value: maxmemory with its size, or what
// 0 means.
func settingText(name, v string) string {
	if name == "maxmemory" {
		n, err := strconv.ParseUint(v, 10, 64)
		switch {
		case err != nil:
		case n == 0:
			return "0 (no limit)"
		default:
			return fmt.Sprintf("%d (%.1f MiB)", n, float64(n)/(1<<20))
		}
	}
	return showValue(v)
}

// showValue shows an empty setting (save "") as "" rather than nothing.
func showValue(v string) string {
	if v == "" {
		return `""`
	}
	return v
}

func yesNo(flag string) string {
	switch flag {
	case "1":
		return "yes"
	case "0":
		return "no"
	}
	return "unknown"
}

// firstLine returns an error's message up to its first line break.
func firstLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

// Info describes the driver, the server and its settings.
func (db *DB) Info() driver.Info { return db.info }

var _ driver.SettingsRestorer = (*DB)(nil)

// RestoreSettings puts appendfsync back when Open changed it (and no other
// DB of this process still needs the change). It runs once: later calls,
// Close's included, return the first one's outcome.
func (db *DB) RestoreSettings(ctx context.Context) error {
	db.releaseOnce.Do(func() {
		if db.release != nil {
			db.releaseErr = db.release(ctx)
		}
	})
	return db.releaseErr
}

// Close puts appendfsync back when Open changed it, and releases every
// connection. Sessions left open fail with a lost connection afterwards.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
		db.closeErr = db.RestoreSettings(ctx)
		cancel()
		db.closed.Store(true)
		db.own.closeAll()
		if err := db.pool.Close(); err != nil && db.closeErr == nil {
			db.closeErr = err
		}
	})
	return db.closeErr
}

// Inspect reports whether the table exists (its schema, its index, or any
// key with its prefix), whether dbprobe created it, whether it holds rows,
// its columns and how it is stored.
func (db *DB) Inspect(ctx context.Context, t driver.Table) (driver.TableState, error) {
	var st driver.TableState
	k, err := newKeys(t.Name)
	if err != nil {
		return st, err
	}
	replies, err := db.pipeline(ctx,
		[]any{"HGETALL", k.schema},
		[]any{"ZCARD", k.index},
		[]any{"SISMEMBER", ownershipKey, k.table})
	if err != nil {
		return st, classify(err)
	}
	h, err := redis.StringMap(replies[0], nil)
	if err != nil {
		return st, classify(err)
	}
	card, err := redis.Int64(replies[1], nil)
	if err != nil {
		return st, classify(err)
	}
	owned, err := redis.Bool(replies[2], nil)
	if err != nil {
		return st, classify(err)
	}
	st.HasRows = card > 0
	st.Exists = len(h) > 0 || st.HasRows
	if !st.HasRows {
		// Keys with the table's prefix that are not in the index are rows
		// dbprobe did not write.
		found, err := db.anyRecord(ctx, k)
		if err != nil {
			return st, err
		}
		st.Exists = st.Exists || found
		st.HasRows = found
	}
	if !st.Exists {
		return st, nil
	}
	st.CreatedByDbprobe = owned
	st.Type = driver.TableDisk
	if len(h) > 0 {
		s, err := parseSchema(h)
		if err != nil {
			return st, fmt.Errorf("redis: table %s: key %s: %w", k.table, k.schema, err)
		}
		st.Columns, st.Type = s.Columns, s.TableType
	}
	st.Storage = db.storage(ctx, k, st.Type, len(h) > 0)
	return st, nil
}

// anyRecord reports whether any key starts with the table's prefix. SCAN
// walks the whole keyspace in steps of scanCount keys, each a short pause
// for the server; it stops at the first match.
func (db *DB) anyRecord(ctx context.Context, k keys) (bool, error) {
	cursor := "0"
	for {
		// SCAN answers the next cursor and the keys found.
		reply, err := redis.Values(db.do(ctx, "SCAN", cursor, "MATCH", k.match, "COUNT", scanCount))
		if err != nil {
			return false, classify(err)
		}
		var found []string
		if _, err := redis.Scan(reply, &cursor, &found); err != nil {
			return false, fmt.Errorf("redis: SCAN: %w", err)
		}
		if len(found) > 0 {
			return true, nil
		}
		if cursor == "0" {
			return false, nil
		}
	}
}

// storage describes how a table is stored, with the persistence read from
// the server now.
func (db *DB) storage(ctx context.Context, k keys, tt driver.TableType, dbprobes bool) string {
	var b strings.Builder
	if dbprobes {
		b.WriteString("a hash per record (" + k.prefix + "<key>), sorted-set index " + k.index + ", every key in memory")
		if tt == driver.TableMemory {
			b.WriteString(" (--table-type memory: the same storage as disk)")
		}
	} else {
		b.WriteString("keys " + k.match + " without a dbprobe schema (" + k.schema + ")")
	}
	b.WriteString("; persistence ")
	if cfg, err := db.config(ctx, "appendonly", "appendfsync", "save"); err == nil {
		fmt.Fprintf(&b, "appendonly=%s appendfsync=%s save=%s", cfg["appendonly"], cfg["appendfsync"], showValue(cfg["save"]))
	} else if p, perr := db.infoSection(ctx, "persistence"); perr == nil {
		fmt.Fprintf(&b, "appendonly=%s (from INFO; CONFIG GET refused)", yesNo(p["aof_enabled"]))
	} else {
		b.WriteString("unknown (CONFIG GET and INFO refused)")
	}
	return b.String()
}

// CreateTable writes the table's schema and records that dbprobe created
// it, in one script: either both happen or neither. It refuses a table
// whose schema, index or records exist.
func (db *DB) CreateTable(ctx context.Context, t driver.Table) error {
	k, err := newKeys(t.Name)
	if err != nil {
		return err
	}
	if len(t.Fields) == 0 {
		return fmt.Errorf("redis: table %s has no fields", t.Name)
	}
	found, err := db.anyRecord(ctx, k)
	if err != nil {
		return err
	}
	if found {
		return badinput.New("Redis database %d already holds keys %s that dbprobe did not create; delete them or choose another table name", db.index, k.match)
	}
	args := append([]any{k.table}, schemaHash(t, db.opts.TableType, time.Now(), version())...)
	created, err := redis.Int64(db.script(ctx, createScript, append([]any{k.schema, k.index, ownershipKey}, args...)...))
	if err != nil {
		return classify(err)
	}
	if created == 0 {
		return badinput.New("table %s already exists in Redis database %d (key %s or %s); drop it or choose another table name",
			k.table, db.index, k.schema, k.index)
	}
	return nil
}

// DropTable deletes a table dbprobe recorded creating: its records (those
// in its index, in chunks, with UNLINK so that the server frees them in the
// background), its index and schema, and last its ownership entry, so that
// an interrupted drop can be run again. It refuses any other table, and
// never deletes a key that is not in the table's index.
func (db *DB) DropTable(ctx context.Context, t driver.Table) error {
	k, err := newKeys(t.Name)
	if err != nil {
		return err
	}
	owned, err := redis.Bool(db.do(ctx, "SISMEMBER", ownershipKey, k.table))
	if err != nil {
		return classify(err)
	}
	if !owned {
		return badinput.New("refusing to drop table %s: dbprobe did not create it (it is not in the set %s of Redis database %d); delete its keys yourself or choose another table name",
			k.table, ownershipKey, db.index)
	}
	for {
		members, err := redis.Strings(db.do(ctx, "ZRANGE", k.index, 0, dropChunk-1))
		if err != nil {
			return classify(err)
		}
		if len(members) == 0 {
			break
		}
		unlink := make([]any, 1, 1+len(members))
		zrem := make([]any, 2, 2+len(members))
		unlink[0], zrem[0], zrem[1] = "UNLINK", "ZREM", k.index
		for _, m := range members {
			unlink = append(unlink, k.prefix+m)
			zrem = append(zrem, m)
		}
		if _, err := db.pipeline(ctx, unlink, zrem); err != nil {
			return classify(err)
		}
	}
	// The schema, the index and the ownership entry go together.
	_, err = db.pipeline(ctx,
		[]any{"MULTI"},
		[]any{"DEL", k.schema, k.index},
		[]any{"SREM", ownershipKey, k.table},
		[]any{"EXEC"})
	return classify(err)
}

// Session returns a worker's handle on table t. The table must exist with
// t's columns: a table loaded with another field count is refused here, as
// the workload would read fields it does not have.
func (db *DB) Session(ctx context.Context, t driver.Table) (driver.Session, error) {
	k, err := newKeys(t.Name)
	if err != nil {
		return nil, err
	}
	if len(t.Fields) == 0 {
		return nil, fmt.Errorf("redis: table %s has no fields", t.Name)
	}
	h, err := redis.StringMap(db.do(ctx, "HGETALL", k.schema))
	if err != nil {
		return nil, classify(err)
	}
	if len(h) == 0 {
		return nil, badinput.New("table %s does not exist in Redis database %d (no key %s); create it with dbprobe load", k.table, db.index, k.schema)
	}
	s, err := parseSchema(h)
	if err != nil {
		return nil, fmt.Errorf("redis: table %s: key %s: %w", k.table, k.schema, err)
	}
	if want := columns(t); !slices.Equal(s.Columns, want) {
		return nil, badinput.New("table %s has the columns %s and the workload wants %s; load it again (--drop-existing) or run with the fieldcount it was loaded with",
			k.table, strings.Join(s.Columns, ","), strings.Join(want, ","))
	}
	return newSession(db, k, t), nil
}

// version is dbprobe's own version as the build recorded it.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "unknown"
}

// library names the Redis client library and the version built in.
func library() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == "github.com/gomodule/redigo" {
				return "redigo " + m.Version
			}
		}
	}
	return "redigo (version unknown)"
}

// callerKey holds, in the context a pool waits under, the caller's own
// context, for the dial.
type callerKey struct{}

// get takes a connection of the pool, waiting at most pool_timeout for one
// when every connection is busy.
func (db *DB) get(ctx context.Context) (redis.Conn, error) {
	if db.closed.Load() {
		return nil, errClosed
	}
	wait := ctx
	if t := db.connOpts.poolTimeout; t > 0 {
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeoutCause(ctx, t, errPoolTimeout)
		defer cancel()
		wait = context.WithValue(wait, callerKey{}, ctx)
	}
	c, err := db.pool.GetContext(wait)
	if err != nil {
		if ctx.Err() == nil && context.Cause(wait) == errPoolTimeout {
			return nil, errPoolTimeout
		}
		if db.closed.Load() {
			return nil, errClosed
		}
		return nil, err
	}
	return c, nil
}

// do runs one command on a connection of the pool, under ctx.
func (db *DB) do(ctx context.Context, cmd string, args ...any) (any, error) {
	c, err := db.get(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return redis.DoContext(c, ctx, cmd, args...)
}

// script runs a script on a connection of the pool, under ctx: EVALSHA,
// and EVAL when the server lacks it.
func (db *DB) script(ctx context.Context, s *redis.Script, keysAndArgs ...any) (any, error) {
	c, err := db.get(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return s.DoContext(ctx, c, keysAndArgs...)
}

// pipeline sends commands (each its name, then its arguments) on one
// connection of the pool and reads their replies, in one round trip. An
// error reply is returned in its place and, the first of them, as the
// error.
func (db *DB) pipeline(ctx context.Context, cmds ...[]any) ([]any, error) {
	c, err := db.get(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return pipeline(ctx, c, cmds...)
}

// pipeline sends cmds on c and reads their replies, as DB.pipeline.
func pipeline(ctx context.Context, c redis.Conn, cmds ...[]any) ([]any, error) {
	for _, cmd := range cmds {
		if err := c.Send(cmd[0].(string), cmd[1:]...); err != nil {
			return nil, err
		}
	}
	// An empty command flushes what was sent and reads every reply.
	replies, err := redis.Values(redis.DoContext(c, ctx, ""))
	if err != nil {
		return nil, err
	}
	for _, r := range replies {
		if e := errorReply(r); e != nil {
			return replies, e
		}
	}
	return replies, nil
}

// errorReply returns the error reply r, or the first one in the array r
// (EXEC answers each queued command's reply in an array).
func errorReply(r any) error {
	switch r := r.(type) {
	case redis.Error:
		return r
	case []any:
		for _, v := range r {
			if e, ok := v.(redis.Error); ok {
				return e
			}
		}
	}
	return nil
}

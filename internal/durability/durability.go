package durability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	_ "github.com/dbprobe/dbprobe/internal/driver/mysql"    // the check drives these three
	_ "github.com/dbprobe/dbprobe/internal/driver/postgres" //
	_ "github.com/dbprobe/dbprobe/internal/driver/sqlite"   //
	"github.com/dbprobe/dbprobe/internal/instance"
)

// Database is what the check runs on.
type Database int

// The databases the check can start itself.
const (
	Postgres Database = iota
	MariaDB
	SQLite
)

var databaseNames = [...]string{"postgres", "mariadb", "sqlite"}

// String returns the name used on the command line.
func (d Database) String() string {
	if d >= 0 && int(d) < len(databaseNames) {
		return databaseNames[d]
	}
	return fmt.Sprintf("database(%d)", int(d))
}

// ParseDatabase parses postgres (postgresql), mariadb (mysql) or sqlite.
func ParseDatabase(s string) (Database, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "postgres", "postgresql", "pg":
		return Postgres, nil
	case "mariadb", "mysql":
		return MariaDB, nil
	case "sqlite", "sqlite3":
		return SQLite, nil
	}
	return 0, badinput.New("unknown database %q for the durability check; known: postgres, mariadb (MySQL), sqlite", s)
}

// Config is one crash-durability check.
type Config struct {
	Database Database
	// Durability is when commits are acknowledged: server (the instance's
	// default: PostgreSQL synchronous_commit=on, MariaDB
	// innodb_flush_log_at_trx_commit=1, SQLite synchronous=NORMAL in WAL),
	// full, or delayed (synchronous_commit=off, =2, synchronous=OFF).
	Durability driver.Durability
	// Cycles is how many times the database is killed and checked.
	Cycles int
	// Writers is how many concurrent writers commit rows.
	Writers int
	// CrashAfterMin and CrashAfterMax bound the random moment of the kill,
	// from the start of a cycle's writes.
	CrashAfterMin, CrashAfterMax time.Duration
	// Seed draws the kill moments; the same seed gives the same moments.
	Seed uint64
	// Bindir is where the server binaries are; "" finds them.
	Bindir string
	// Dir holds the client log (and the SQLite file); "" is a temporary
	// directory removed at the end.
	Dir string
	// ChildArgs are the arguments the executable is re-run with to write to
	// SQLite (the environment carries the rest): the hidden command that
	// calls ChildMain. Test binaries ignore them.
	ChildArgs []string
}

// Validate checks the configuration; its errors are bad input.
func (c Config) Validate() error {
	if c.Database < Postgres || c.Database > SQLite {
		return badinput.New("unknown database %d for the durability check; known: postgres, mariadb, sqlite", int(c.Database))
	}
	if c.Cycles < 1 {
		return badinput.New("--cycles %d: the check needs at least one crash cycle (5 is the least that says much)", c.Cycles)
	}
	if c.Writers < 1 {
		return badinput.New("--writers %d: the check needs at least one writer", c.Writers)
	}
	if c.CrashAfterMin <= 0 || c.CrashAfterMax < c.CrashAfterMin {
		return badinput.New("--crash-after %s..%s: give a positive range, shortest first, e.g. 1s..3s", c.CrashAfterMin, c.CrashAfterMax)
	}
	return nil
}

// Run runs the check: starts the database, kills it Cycles times while
// writers commit, and checks every acknowledged row after each restart.
// Progress lines go to progress as the cycles end, and records to out as
// they are known (see Output). An interrupted run (ctx cancelled) returns
// the cycles it finished, marked Interrupted. A run that fails returns no
// report; out then holds the cycles checked before, without a summary.
func Run(ctx context.Context, cfg Config, progress io.Writer, out Output) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	dir := cfg.Dir
	if dir == "" {
		d, err := instance.TempDir()
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	tgt, err := newTarget(ctx, cfg, dir)
	if err != nil {
		return nil, err
	}
	defer tgt.close()

	info, err := prepareTable(ctx, tgt, cfg)
	if err != nil {
		return nil, err
	}
	server := tgt.version()
	if server == "" {
		server = info.Library
	}
	rep := &Report{
		Database:   cfg.Database.String(),
		Server:     server,
		Durability: cfg.Durability,
		Settings:   durabilitySettings(cfg.Database, info.Settings),
		Writers:    cfg.Writers,
		Cycles:     cfg.Cycles,
		CrashAfter: cfg.CrashAfter(),
		Seed:       cfg.Seed,
		Caveat:     Caveat(cfg.Database, cfg.Durability),
	}
	writeHeader(progress, rep)
	if err := out.header(start, info); err != nil {
		return nil, err
	}

	logPath := filepath.Join(dir, "acknowledged.log")
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x64757261))
	for c := 1; c <= cfg.Cycles; c++ {
		crashAfter := cfg.CrashAfterMin
		if span := cfg.CrashAfterMax - cfg.CrashAfterMin; span > 0 {
			crashAfter += time.Duration(rng.Int64N(int64(span) + 1))
		}
		cycleStart := time.Now()
		log, err := openAckLog(logPath)
		if err != nil {
			return nil, err
		}
		killedAt, err := tgt.writeUntilCrash(ctx, c, crashAfter, log)
		if cerr := log.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			rep.Interrupted = true
			break
		}
		recoverStart := time.Now()
		if err := tgt.restart(ctx); err != nil {
			return nil, fmt.Errorf("cycle %d: restart after the kill: %w", c, err)
		}
		present, err := readKeys(ctx, tgt)
		if err != nil {
			return nil, fmt.Errorf("cycle %d: read back after the restart: %w", c, err)
		}
		recovery := time.Since(recoverStart)
		acks, err := readAckLog(logPath)
		if err != nil {
			return nil, err
		}
		cyc, earlierMissing := analyse(c, acks, present, killedAt)
		cyc.Start, cyc.End = cycleStart, time.Now()
		cyc.CrashAfter = crashAfter
		cyc.Recovery = recovery
		rep.add(&cyc, earlierMissing)
		writeCycle(progress, cyc)
		if err := out.cycle(cyc); err != nil {
			return nil, err
		}
	}
	writeTotal(progress, rep)
	if err := out.summary(rep, time.Since(start)); err != nil {
		return nil, err
	}
	return rep, nil
}

// table is the check's table: a key and one field, enough to tell one
// commit from another.
var table = driver.Table{Name: "dbprobe_durability", KeyColumn: "YCSB_KEY", KeyLength: 255, Fields: []string{"FIELD0"}, FieldLength: 100}

// openDB opens the target through its dbprobe driver with the durability
// knob where the driver applies it (SQLite; the servers got theirs when
// they started, so that it holds after every restart).
func openDB(ctx context.Context, url string, cfg Config, sessions int) (driver.DB, error) {
	target, err := driver.ParseTarget(url, "")
	if err != nil {
		return nil, err
	}
	d, _, err := driver.Lookup(target.Driver)
	if err != nil {
		return nil, err
	}
	opts := driver.Options{Sessions: sessions}
	if cfg.Database == SQLite {
		opts.Durability = cfg.Durability
	}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, err := d.Open(octx, target, opts)
	if err != nil {
		return nil, errors.New(target.ScrubError(err))
	}
	return db, nil
}

// prepareTable creates the table and returns what the driver read back
// about the settings in force.
func prepareTable(ctx context.Context, tgt target, cfg Config) (driver.Info, error) {
	db, err := openDB(ctx, tgt.url(), cfg, 1)
	if err != nil {
		return driver.Info{}, err
	}
	defer db.Close()
	if err := db.CreateTable(ctx, table); err != nil {
		return driver.Info{}, fmt.Errorf("create %s: %w", table.Name, err)
	}
	return db.Info(), nil
}

// readKeys returns every key in the table after a restart.
func readKeys(ctx context.Context, tgt target) (map[string]bool, error) {
	db, err := openDB(ctx, tgt.url(), Config{Database: tgt.database()}, 1)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	s, err := db.Session(ctx, table)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	const page = 5000
	keys := map[string]bool{}
	var start []byte
	for {
		var last string
		n, err := s.Scan(ctx, start, page, []int{0}, func(key []byte, _ [][]byte) {
			last = string(key)
			keys[last] = true
		})
		if err != nil {
			return nil, err
		}
		if n < page {
			return keys, nil
		}
		// The next page starts at the last key again: a successor such as
		// last+"\x00" is not valid text in every database.
		start = []byte(last)
	}
}

// CrashAfter returns the range of the kill's moment as --crash-after
// takes it: MIN..MAX, or one duration.
func (c Config) CrashAfter() string {
	if c.CrashAfterMin == c.CrashAfterMax {
		return c.CrashAfterMin.String()
	}
	return c.CrashAfterMin.String() + ".." + c.CrashAfterMax.String()
}

// durabilitySettings keeps the settings that decide what a commit's
// acknowledgement promises. The drivers' own "durability" note describes
// their knob, which only the SQLite writer uses: a server got its setting
// when it started.
func durabilitySettings(db Database, all []driver.Setting) []driver.Setting {
	keep := map[string]bool{"synchronous_commit": true, "fsync": true, "wal_sync_method": true,
		"innodb_flush_log_at_trx_commit": true, "innodb_flush_method": true, "sync_binlog": true,
		"journal_mode": true, "synchronous": true, "durability": db == SQLite}
	var out []driver.Setting
	for _, s := range all {
		if keep[s.Name] {
			out = append(out, s)
		}
	}
	return out
}

// target is the database the check kills: a server instance, or an SQLite
// file written by a child process.
type target interface {
	database() Database
	url() string
	version() string
	// writeUntilCrash commits rows of cycle with cfg.Writers writers,
	// logging each acknowledged one, and kills the database after
	// crashAfter; it returns when every writer stopped, with the moment of
	// the kill.
	writeUntilCrash(ctx context.Context, cycle int, crashAfter time.Duration, log *ackLog) (time.Time, error)
	// restart brings the database back after the kill.
	restart(ctx context.Context) error
	close()
}

func newTarget(ctx context.Context, cfg Config, dir string) (target, error) {
	if cfg.Database == SQLite {
		return newSQLiteTarget(cfg, dir)
	}
	kind := instance.Postgres
	settings := map[string]string{}
	switch {
	case cfg.Database == Postgres && cfg.Durability == driver.DurabilityFull:
		settings["synchronous_commit"] = "on"
	case cfg.Database == Postgres && cfg.Durability == driver.DurabilityDelayed:
		settings["synchronous_commit"] = "off"
	case cfg.Database == MariaDB:
		kind = instance.MariaDB
		switch cfg.Durability {
		case driver.DurabilityFull:
			settings["innodb_flush_log_at_trx_commit"] = "1"
		case driver.DurabilityDelayed:
			settings["innodb_flush_log_at_trx_commit"] = "2"
		}
	}
	srv, err := instance.Start(ctx, kind, instance.Options{Bindir: cfg.Bindir, Settings: settings})
	if err != nil {
		return nil, err
	}
	return &serverTarget{srv: srv, db: cfg.Database, cfg: cfg}, nil
}

// serverTarget is a PostgreSQL or MariaDB instance; the writers run in
// this process.
type serverTarget struct {
	srv *instance.Server
	db  Database
	cfg Config
}

func (t *serverTarget) database() Database { return t.db }
func (t *serverTarget) url() string        { return t.srv.URL() }
func (t *serverTarget) version() string    { return t.srv.Version() }
func (t *serverTarget) close()             { t.srv.Close() }

func (t *serverTarget) restart(ctx context.Context) error { return t.srv.Restart(ctx) }

// killGrace is how long writers may take to see their connections broken
// after the kill before they are cancelled: long enough to read an
// acknowledgement already on its way, short enough not to hang.
const killGrace = 2 * time.Second

func (t *serverTarget) writeUntilCrash(ctx context.Context, cycle int, crashAfter time.Duration, log *ackLog) (time.Time, error) {
	db, err := openDB(ctx, t.url(), t.cfg, t.cfg.Writers)
	if err != nil {
		return time.Time{}, err
	}
	// Close waits for nothing on a killed server; its errors say only
	// that the server is gone.
	defer db.Close()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	first := newFirstAck(log)
	done := make(chan error, 1)
	go func() { done <- write(wctx, db, cycle, t.cfg.Writers, first.record) }()

	killedAt, stopped, err := crashCycle(ctx, first.seen, done, crashAfter, t.srv.Kill)
	if !stopped {
		select {
		case <-done:
		case <-time.After(killGrace):
			cancel()
			<-done
		}
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("cycle %d: %s", cycle, t.srv.Scrub(err))
	}
	return killedAt, nil
}

// firstAck passes acknowledgements to the log and says when the first
// one came: the kill's delay counts from there, not from the time the
// writers took to connect.
type firstAck struct {
	log  *ackLog
	once sync.Once
	seen chan struct{}
}

func newFirstAck(log *ackLog) *firstAck { return &firstAck{log: log, seen: make(chan struct{})} }

func (f *firstAck) record(key string, at time.Time) {
	f.once.Do(func() { close(f.seen) })
	f.log.record(key, at)
}

// firstAckTimeout bounds the wait for the first acknowledged commit.
const firstAckTimeout = 30 * time.Second

// crashCycle waits for the first acknowledged commit, then crashAfter,
// then kills. stopped says whether the writers (done) already ended. An
// interrupted cycle (ctx cancelled) kills too, so that nothing is left
// writing, and returns no error.
func crashCycle(ctx context.Context, started <-chan struct{}, done <-chan error, crashAfter time.Duration, kill func() error) (killedAt time.Time, stopped bool, err error) {
	select {
	case err := <-done:
		return time.Time{}, true, fmt.Errorf("the writers stopped before the first commit: %v", err)
	case <-time.After(firstAckTimeout):
		return time.Time{}, false, errors.Join(fmt.Errorf("no commit was acknowledged within %s", firstAckTimeout), kill())
	case <-ctx.Done():
		return time.Time{}, false, kill()
	case <-started:
	}
	select {
	case err := <-done:
		return time.Time{}, true, fmt.Errorf("the writers stopped before the kill: %v", err)
	case <-ctx.Done():
		return time.Time{}, false, kill()
	case <-time.After(crashAfter):
	}
	if err := kill(); err != nil {
		return time.Time{}, false, err
	}
	// The moment the kill was complete: acknowledgements read from a
	// socket or pipe until then may still arrive.
	return time.Now(), false, nil
}

package sqlite

import (
	"errors"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// config is a parsed sqlite target: where the database is and how to set
// each connection up.
type config struct {
	// path is the database file as the user wrote it; empty for memory.
	path string
	// memory selects a private in-memory database shared by every
	// connection of one DB.
	memory bool
	// journalMode is the journal_mode to set, upper case; empty leaves the
	// database's own (an in-memory database is always MEMORY).
	journalMode string
	// synchronous is the synchronous level to set: OFF, NORMAL, FULL, EXTRA.
	synchronous string
	// busyTimeoutMS is how long SQLite waits for a lock held by another
	// process before it returns BUSY.
	busyTimeoutMS int
	// journalModeSet and synchronousSet say that the URL chose the journal
	// mode and the synchronous level, so that a knob never overrides the
	// user's choice silently.
	journalModeSet, synchronousSet bool
	// unusedPath is the file the URL names when --table-type memory put the
	// database in memory instead; it is reported, never opened.
	unusedPath string
	// vfs is the SQLite VFS a file database is opened through (see
	// vfsExclusive, the default); vfsSet says the URL chose it.
	vfs    string
	vfsSet bool
}

// Defaults: WAL lets readers run while the one writer commits; NORMAL is
// SQLite's own recommendation with WAL (a commit survives a crash of the
// process but not of the machine, and is not fsynced until a checkpoint);
// 5 s of busy timeout covers a checkpoint or another process's write.
const (
	defaultJournalMode = "WAL"
	defaultSynchronous = "NORMAL"
	defaultBusyTimeout = 5000
)

// The VFSs a file database can be opened through: SQLite's own two for
// Unix, which differ only in how they lock.
//
// vfsExclusive ("unix-excl", the default) takes an exclusive lock on the
// file once, when the first connection opens it, and keeps every other
// lock — between dbprobe's own connections, and the WAL index — in the
// process's memory: no -shm file, no fcntl call for each transaction.
// Another process cannot open the database while dbprobe has it open.
// That is how an application that owns its database file can run SQLite,
// and what dbprobe measures unless told otherwise: under workload A at 8
// threads the shared VFS spends 12% of the process's time in fcntl calls
// for the WAL's read marks and write lock, with the readers queueing on
// the mutex SQLite holds around them (bench/RESULTS.md).
//
// vfsShared ("unix", SQLite's default) locks through the file system, so
// other processes can read and write the database during a run.
const (
	vfsExclusive = "unix-excl"
	vfsShared    = "unix"
)

var vfsNames = []string{vfsExclusive, vfsShared}

// options lists the query options a sqlite URL accepts.
var options = []string{"busy_timeout", "journal_mode", "synchronous", "vfs"}

var (
	journalModes = []string{"DELETE", "TRUNCATE", "PERSIST", "MEMORY", "WAL", "OFF"}
	// synchronousLevels are indexed by the number PRAGMA synchronous reads back.
	synchronousLevels = []string{"OFF", "NORMAL", "FULL", "EXTRA"}
)

const urlForms = "sqlite:///abs/path.db, sqlite:rel/path.db, sqlite://./rel/path.db or sqlite::memory:"

// parseTarget reads a sqlite URL into a config. Every mistake is bad input
// whose message says what to write instead.
func parseTarget(u *url.URL) (config, error) {
	if u == nil {
		return config{}, badinput.New("sqlite: no database URL; write %s", urlForms)
	}
	if u.User != nil {
		return config{}, badinput.New("sqlite: the URL holds a user name, but SQLite opens a file and takes no credentials; write %s", urlForms)
	}
	cfg := config{
		journalMode:   defaultJournalMode,
		synchronous:   defaultSynchronous,
		busyTimeoutMS: defaultBusyTimeout,
		vfs:           vfsExclusive,
	}
	path, err := targetPath(u)
	if err != nil {
		return config{}, err
	}
	if path == ":memory:" {
		cfg.memory = true
		// An in-memory database has no file for WAL: SQLite keeps MEMORY
		// whatever is asked, so the default is to ask for nothing.
		cfg.journalMode = ""
	} else {
		cfg.path = path
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		// Neither the query nor the piece of it the error quotes is
		// repeated: a ?password= in it is the target's password.
		return config{}, badinput.New("sqlite: the URL's query does not parse (%s); write options as ?synchronous=FULL&busy_timeout=1000", describeQueryError(err))
	}
	for name, values := range query {
		if len(values) != 1 {
			return config{}, badinput.New("sqlite: option %s is given %d times; give it once", name, len(values))
		}
		v := values[0]
		switch strings.ToLower(name) {
		case "synchronous":
			level, ok := parseSynchronous(v)
			if !ok {
				return config{}, badinput.New("sqlite: synchronous=%s is not a level; use one of %s", v, strings.Join(synchronousLevels, ", "))
			}
			cfg.synchronous, cfg.synchronousSet = level, true
		case "journal_mode":
			mode := strings.ToUpper(v)
			if !slices.Contains(journalModes, mode) {
				return config{}, badinput.New("sqlite: journal_mode=%s is not a journal mode; use one of %s", v, strings.Join(journalModes, ", "))
			}
			cfg.journalMode, cfg.journalModeSet = mode, true
		case "busy_timeout":
			ms, err := strconv.Atoi(v)
			if err != nil || ms < 0 {
				return config{}, badinput.New("sqlite: busy_timeout=%s is not a whole number of milliseconds (0 or more)", v)
			}
			cfg.busyTimeoutMS = ms
		case "vfs":
			if !slices.Contains(vfsNames, v) {
				return config{}, badinput.New("sqlite: vfs=%s is not a VFS dbprobe opens files through; use %s (the default: the file is locked to dbprobe for the run) or %s (other processes may open it meanwhile)", v, vfsExclusive, vfsShared)
			}
			cfg.vfs, cfg.vfsSet = v, true
		default:
			return config{}, badinput.New("sqlite: unknown option %q in the URL; accepted options: %s", name, strings.Join(options, ", "))
		}
	}
	if cfg.memory && cfg.vfsSet {
		return config{}, badinput.New("sqlite: vfs=%s chooses how a database file is locked, and :memory: has no file; remove the option", cfg.vfs)
	}
	return cfg, nil
}

// targetPath finds the file path in the URL's forms (see the package doc).
func targetPath(u *url.URL) (string, error) {
	var path string
	switch {
	case u.Opaque != "":
		// sqlite:rel/path.db and sqlite::memory: — the opaque part is not
		// unescaped by net/url, so do it here like Path is.
		p, err := url.PathUnescape(u.Opaque)
		if err != nil {
			return "", badinput.New("sqlite: path %q has a bad %%-escape; write %s", u.Opaque, urlForms)
		}
		path = p
	case u.Host == ":memory:" && u.Path == "":
		path = ":memory:"
	case u.Host != "":
		// sqlite://./rel.db, sqlite://data/bench.db, sqlite://bench.db: the
		// "host" is the first component of a relative path.
		if strings.Contains(u.Host, ":") {
			return "", badinput.New("sqlite: %q looks like a server address, but SQLite opens a file; write %s", u.Host, urlForms)
		}
		path = u.Host + u.Path
	default:
		path = u.Path
	}
	if path == "" {
		return "", badinput.New("sqlite: the URL names no database file; write %s", urlForms)
	}
	if path == ":memory:" {
		return path, nil
	}
	if strings.HasSuffix(path, "/") {
		return "", badinput.New("sqlite: %q is a directory, not a database file; add a file name such as bench.db", path)
	}
	return filepath.Clean(path), nil
}

// parseSynchronous accepts a level by name, in any case, or by the number
// SQLite gives it.
func parseSynchronous(v string) (string, bool) {
	up := strings.ToUpper(v)
	if slices.Contains(synchronousLevels, up) {
		return up, true
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < len(synchronousLevels) {
		return synchronousLevels[n], true
	}
	return "", false
}

// fileURI turns a path into the URI form SQLite opens, escaping what would
// otherwise end the path (?, #) or start an escape (%).
func fileURI(path string) string {
	return "file:" + (&url.URL{Path: filepath.ToSlash(path)}).EscapedPath()
}

// describeQueryError says why url.ParseQuery refused a query, without the
// text it quotes.
func describeQueryError(err error) string {
	var esc url.EscapeError
	switch {
	case errors.As(err, &esc):
		return "a malformed %-escape"
	case strings.Contains(err.Error(), "semicolon"):
		return "a ';' between options (use '&')"
	}
	return "it cannot be parsed"
}

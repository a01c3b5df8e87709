package postgres

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// setting is one server setting Info reports.
type setting struct {
	name string
	// sourceOf names the setting whose pg_settings.source says where the
	// value came from, when that is another setting's (the isolation of a
	// transaction comes from default_transaction_isolation).
	sourceOf string
	// alongside names a setting read with this one and shown in its
	// value, as it only qualifies it.
	alongside string
	// since is the first PostgreSQL major version that has the setting; 0
	// for every version dbprobe meets.
	since int
}

// settings are the server settings that shape the numbers, reported in
// Info in this order. They are read on a connection opened as the
// sessions' are, since every one a session can change may differ there
// from the server's configuration: a startup parameter of the URL or of
// dbprobe, ALTER ROLE … SET and ALTER DATABASE … SET all apply when a
// connection starts, and only there.
//
// Left out, though sessions may set them: default_transaction_deferrable
// (it changes only transactions both SERIALIZABLE and READ ONLY, which
// the two settings shown for those say), deadlock_timeout
// (a deadlock needs transactions that each lock several rows: only a load
// batch does, and the batches of a load insert keys no other one holds),
// idle_in_transaction_session_timeout (a session is inside a transaction
// only within one InsertBatch, between two round trips), jit (a point
// read or a scan of at most maxscanlength rows is costed far below
// jit_above_cost) and search_path (it decides which table is used, which
// Inspect reports, not what an operation costs).
var settings = []setting{
	// Whether a commit waits for its WAL to be flushed (or replicated):
	// the cost of every write.
	{name: "synchronous_commit"},
	// What a flushed commit is worth, and how long the flush takes.
	{name: "fsync"},
	{name: "wal_sync_method"},
	{name: "full_page_writes"},
	// How much WAL a write adds.
	{name: "wal_level"},
	// How much of the table reads find in the server's memory.
	{name: "shared_buffers"},
	// How many sessions the server takes (--threads beyond it fail).
	{name: "max_connections"},
	// The isolation of every operation's transaction: REPEATABLE READ and
	// SERIALIZABLE fail concurrent updates of a row with 40001, and
	// SERIALIZABLE takes predicate locks on every read besides.
	{name: "transaction_isolation", sourceOf: "default_transaction_isolation"},
	// On, every write fails (25006).
	{name: "default_transaction_read_only"},
	// Operations that outlast them fail (57014, 55P03) rather than wait.
	{name: "statement_timeout"},
	{name: "lock_timeout"},
	// A session idle longer than this between operations (a run paced by
	// --target) loses its connection.
	{name: "idle_session_timeout", since: 14},
	// commit_delay makes a commit sleep before its flush when at least
	// commit_siblings other transactions are open.
	{name: "commit_delay", alongside: "commit_siblings"},
	// Whether a prepared statement is planned once or at every execution.
	{name: "plan_cache_mode", since: 12},
	// Logging every statement costs a log write per operation.
	{name: "log_statement"},
	{name: "log_min_duration_statement"},
}

// settingRow is what the server answered about one setting on a session's
// connection.
type settingRow struct {
	name string
	// known is false when pg_settings has no row for the name: the server
	// has no such setting, or hides it from the user.
	known  bool
	value  string // current_setting(name)
	source string // pg_settings.source of the setting, or of its sourceOf
}

// sessionAnswer is what readSessionSettings read: the settings, in the
// order asked, and who the connection is.
type sessionAnswer struct {
	rows     []settingRow
	version  int // server_version_num
	user     string
	database string
}

// settingsQuery reads every setting of settings, and the settings named
// by their sourceOf and alongside, in one statement: the value
// current_setting gives (the session's, with its unit), and the source
// pg_settings gives. A name pg_settings lacks gives NULL rather than
// current_setting's error, so that one setting the server does not have
// costs only its own line.
func settingsQuery() string {
	var names strings.Builder
	for i, s := range settings {
		if i > 0 {
			names.WriteString(", ")
		}
		names.WriteString("'" + s.name + "'")
		for _, n := range []string{s.sourceOf, s.alongside} {
			if n != "" {
				names.WriteString(", '" + n + "'")
			}
		}
	}
	return `SELECT n.name, s.name IS NOT NULL, coalesce(current_setting(s.name), ''), coalesce(s.source, ''),
	current_setting('server_version_num'), session_user::text, current_database()::text
FROM unnest(ARRAY[` + names.String() + `]::text[]) WITH ORDINALITY AS n(name, i)
LEFT JOIN pg_settings s ON s.name = n.name
ORDER BY n.i`
}

// readSessionSettings reads the settings on a connection opened with the
// sessions' configuration, then closes it.
func (db *DB) readSessionSettings(ctx context.Context) (sessionAnswer, error) {
	var a sessionAnswer
	pc, err := pgconn.ConnectConfig(ctx, db.connConfig)
	if err != nil {
		return a, err
	}
	defer pc.Close(context.WithoutCancel(ctx))
	res := pc.ExecParams(ctx, settingsQuery(), nil, nil, nil, nil).Read()
	if res.Err != nil {
		return a, res.Err
	}
	for _, r := range res.Rows {
		if len(r) != 7 {
			return a, fmt.Errorf("postgres: reading the settings back gave rows of %d columns", len(r))
		}
		a.rows = append(a.rows, settingRow{name: string(r[0]), known: string(r[1]) == "t", value: string(r[2]), source: string(r[3])})
		a.version, _ = strconv.Atoi(string(r[4]))
		a.user, a.database = string(r[5]), string(r[6])
	}
	return a, nil
}

// origin says where a setting's value came from, for Info: "" when it is
// the server's own (its configuration, command line or built-in default),
// since what the header must make visible is a value that dbprobe's
// sessions have and a look at postgresql.conf would not show.
type origin struct {
	user, database string
	// dbprobeSet holds the startup parameters dbprobe set itself, with
	// the flag that asked for each.
	dbprobeSet map[string]string
	// params are the connections' startup parameters, the URL's among
	// them.
	params map[string]string
}

// of says where setting name got its value, given its pg_settings.source.
func (o origin) of(name, source string) string {
	switch source {
	case "client":
		if flag, ok := o.dbprobeSet[name]; ok {
			return "set by dbprobe for " + flag
		}
		if _, ok := urlSetting(o.params, name); ok {
			// pgx reads PGOPTIONS into the same startup options a URL's
			// ?options= gives.
			if strings.Contains(os.Getenv("PGOPTIONS"), name) {
				return "from the URL or PGOPTIONS"
			}
			return "from the URL"
		}
		return "from the connection's startup parameters"
	case "database":
		return "from ALTER DATABASE " + o.database + " SET"
	case "user":
		return "from ALTER ROLE " + o.user + " SET"
	case "database user":
		return "from ALTER ROLE " + o.user + " IN DATABASE " + o.database + " SET"
	case "global":
		// pg_db_role_setting's entry for every role and database.
		return "from ALTER ROLE ALL SET"
	case "session":
		return "SET in the session"
	}
	return ""
}

// formatSettings turns the server's answer into Info's settings, in the
// order of settings: each value as the session has it, followed by where
// it came from when that is not the server's own, and a setting the
// answer lacks says why.
func formatSettings(a sessionAnswer, o origin) []driver.Setting {
	byName := make(map[string]settingRow, len(a.rows))
	for _, r := range a.rows {
		byName[r.name] = r
	}
	o.user, o.database = a.user, a.database
	out := make([]driver.Setting, 0, len(settings))
	for _, s := range settings {
		r, ok := byName[s.name]
		switch {
		case !ok:
			out = append(out, driver.Setting{Name: s.name, Value: "unknown: not read back"})
			continue
		case !r.known && s.since > 0 && a.version > 0 && a.version/10000 < s.since:
			out = append(out, driver.Setting{Name: s.name, Value: fmt.Sprintf("none: PostgreSQL %d has no such setting (added in %d)", a.version/10000, s.since)})
			continue
		case !r.known:
			out = append(out, driver.Setting{Name: s.name, Value: "unknown: the server shows no such setting to user " + a.user})
			continue
		}
		value := r.value
		// What qualifies a setting matters only while it is on.
		if q, ok := byName[s.alongside]; ok && q.known && value != "0" {
			value += " (" + s.alongside + " " + q.value + ")"
		}
		from, source := s.name, r.source
		if s.sourceOf != "" {
			from, source = s.sourceOf, byName[s.sourceOf].source
		}
		if where := o.of(from, source); where != "" {
			if from != s.name {
				where = from + ", " + where
			}
			value += " (" + where + ")"
		}
		out = append(out, driver.Setting{Name: s.name, Value: value})
	}
	return out
}

// autocommitText says how each operation is committed. PostgreSQL has no
// autocommit setting: a statement sent outside BEGIN is a transaction of
// its own, and the sessions send every operation that way.
func autocommitText(opts driver.Options) string {
	text := "implicit: every operation is one statement, committed on its own"
	if opts.OpPath == driver.PathProcedure {
		text = "implicit: every operation is one call of the table's function, committed on its own"
	}
	if opts.BulkLoad {
		return text + "; a load batch is one COPY, itself one transaction"
	}
	return text + "; a load batch is one transaction (BEGIN, multi-row INSERTs, COMMIT)"
}

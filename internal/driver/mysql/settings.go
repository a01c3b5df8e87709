package mysql

import (
	"context"
	"database/sql"
	"strings"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// variable is one server variable Info reports.
type variable struct {
	// names are the server's names for it, tried in order: the first the
	// server has is read. Info shows names[0] unless show is set.
	names []string
	// show is the name Info gives it when names[0] is not; "" shows the
	// name the server has.
	show string
	// alongside names a variable shown in this one's value while this one
	// is ON, as it only qualifies it.
	alongside string
}

// variables are the server variables that shape the numbers, read back at
// Open and reported in Info in this order. Each is read on a pool
// connection, which the connector opens as it opens the sessions' (the
// URL's session variables, the server's init_connect), for the session's
// value; a value that differs from the global one says where it came from.
//
// Left out: sql_mode (dbprobe's values always fit their columns, so strict
// or not changes nothing), innodb_flush_log_at_timeout (it matters only
// with innodb_flush_log_at_trx_commit 0 or 2, whose lines say so).
var variables = []variable{
	// When a commit's redo log is flushed: the cost of every write.
	{names: []string{flushVariable}},
	// The binary log, when on, has a write and maybe a sync of its own at
	// each commit, and its format decides how many bytes an update adds.
	{names: []string{"sync_binlog"}},
	{names: []string{"log_bin"}},
	{names: []string{"binlog_format"}},
	// REPEATABLE READ (InnoDB's default) and SERIALIZABLE take next-key
	// locks; SERIALIZABLE turns every read into a locking read. MariaDB
	// before 11.1 names it tx_isolation.
	{names: []string{"transaction_isolation", "tx_isolation"}, show: "transaction_isolation"},
	// Whether each statement commits on its own: the autocommit line says
	// what that means for the operations (see autocommitText).
	{names: []string{"autocommit"}},
	// ON, every write fails (1792).
	{names: []string{"transaction_read_only", "tx_read_only"}, show: "transaction_read_only"},
	{names: []string{"innodb_buffer_pool_size"}},
	{names: []string{"innodb_doublewrite"}},
	{names: []string{"innodb_flush_method"}},
	// The redo log's size bounds the checkpoint age: writes faster than
	// the checkpoints free it wait on them. MySQL 8.0.30 and later sizes
	// it by its capacity, MariaDB by its one file.
	{names: []string{"innodb_redo_log_capacity", "innodb_log_file_size"}},
	// How long a write waits for a row lock, or a statement for a table
	// or metadata lock, before it fails (1205).
	{names: []string{"innodb_lock_wait_timeout"}},
	{names: []string{"lock_wait_timeout"}},
	// Deadlock detection runs at every lock wait; with many sessions on
	// hot rows it is CPU of its own, and without it a deadlock waits out
	// innodb_lock_wait_timeout.
	{names: []string{"innodb_deadlock_detect"}},
	// A statement that outlasts it fails: MySQL's max_execution_time
	// (SELECTs only), MariaDB's max_statement_time.
	{names: []string{"max_execution_time", "max_statement_time"}},
	// Logging every statement, or every slow one when long_query_time is
	// 0, costs a write per operation; the Performance Schema instruments
	// every statement.
	{names: []string{"general_log"}},
	{names: []string{"slow_query_log"}, alongside: "long_query_time"},
	{names: []string{"performance_schema"}},
	{names: []string{"max_connections"}},
	{names: []string{"max_allowed_packet"}},
	{names: []string{"local_infile"}},
}

// variableNames lists every name the variables may have on a server, for
// the statements that read them.
func variableNames() []string {
	var out []string
	for _, v := range variables {
		out = append(out, v.names...)
		if v.alongside != "" {
			out = append(out, v.alongside)
		}
	}
	return out
}

// showVariables runs SHOW scope VARIABLES for variableNames and returns
// the values by lower-case name.
func showVariables(ctx context.Context, pool *sql.DB, scope string) (map[string]string, error) {
	var q strings.Builder
	q.WriteString("SHOW " + scope + " VARIABLES WHERE Variable_name IN (")
	for i, n := range variableNames() {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("'" + n + "'")
	}
	q.WriteString(")")
	rows, err := pool.QueryContext(ctx, q.String())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	values := map[string]string{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		values[strings.ToLower(name)] = value
	}
	return values, rows.Err()
}

// formatVariables turns the session's and the global values into Info's
// settings, in the order of variables. A value the session has from the
// URL says so; one that differs from the global value otherwise says
// that (the server's init_connect, or a proxy, set it); a variable the
// server does not have says so.
func formatVariables(session, global, fromURL map[string]string, opts driver.Options) []driver.Setting {
	out := make([]driver.Setting, 0, len(variables))
	for _, v := range variables {
		server, value, found := "", "", false
		for _, n := range v.names {
			if value, found = session[n]; found {
				server = n
				break
			}
		}
		name := server
		switch {
		case v.show != "":
			name = v.show
		case !found:
			name = v.names[0]
		}
		if !found {
			out = append(out, driver.Setting{Name: name, Value: "none: the server has no variable " + strings.Join(v.names, " or ")})
			continue
		}
		shown := showValue(value)
		if q, ok := session[v.alongside]; ok && isOn(value) {
			shown += " (" + v.alongside + " " + q + ")"
		}
		if server == "autocommit" {
			shown = autocommitText(value, opts)
		}
		switch g, ok := global[server]; {
		case hasKey(fromURL, server):
			shown += " (from the URL)"
		case ok && g != value:
			shown += " (the session's own: the global value is " + showValue(g) + ")"
		}
		// autocommit's text says how the key-value operations commit.
		out = append(out, driver.Setting{Name: name, Value: shown, KeyValue: server == "autocommit"})
	}
	return out
}

// hasKey reports whether m holds k.
func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// isOn reports whether a variable's value is ON.
func isOn(v string) bool {
	return strings.EqualFold(v, "ON") || v == "1"
}

// showValue shows an empty value ("" for innodb_flush_method on some
// servers) as "" rather than nothing.
func showValue(v string) string {
	if v == "" {
		return `""`
	}
	return v
}

// autocommitText says how the operations are committed under a session's
// autocommit.
func autocommitText(value string, opts driver.Options) string {
	if !isOn(value) {
		return value + ": an operation's changes are not committed, and its row locks stay held, until the session's next COMMIT (a load batch's) or its end"
	}
	op := "every operation is one statement, committed on its own"
	if opts.OpPath == driver.PathProcedure {
		op = "every operation is one CALL, whose statement commits on its own"
	}
	return value + ": " + op + "; a load batch is one transaction (see load path)"
}

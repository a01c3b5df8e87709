package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"fmt"
	"strconv"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqltext"
)

// noTempPlace says why MySQL has no TempPlacer, and what to do instead.
const noTempPlace = "tmpdir, where MySQL and MariaDB put the sorts and temporary tables that spill, is server-wide and read-only while the server runs: " +
	"set tmpdir in the server's my.cnf ([mysqld]) to the directory, restart the server, and run without --placement-temp"

// sqlConnector opens the connections of SQL text that are not the pool's:
// the URL's, or with simple the same with interpolateParams, so that
// go-sql-driver puts each parameter into the text as an escaped literal
// and sends one COM_QUERY instead of preparing the statement. Both record
// their thread ids, as the pool's do, for the monitor.
func (db *DB) sqlConnector(simple bool) (sqldriver.Connector, error) {
	if !simple {
		return db.conns.connector(db.connector), nil
	}
	cfg := db.settings.cfg.Clone()
	cfg.InterpolateParams = true
	c, err := gomysql.NewConnector(cfg)
	if err != nil {
		return nil, badinput.New("MySQL cannot put parameters into the text with --db %s (%w); use the prepared protocol",
			db.target.Redacted(), &driver.Scrubbed{Msg: db.target.ScrubConnect(err.Error()), Err: err})
	}
	return db.conns.connector(c), nil
}

// Exec runs text once by the text protocol, which takes what the server
// will not prepare (CREATE TRIGGER, CREATE PROCEDURE on MySQL).
func (s *sqlConn) Exec(ctx context.Context, text string) (driver.Outcome, error) {
	return s.SQLConn.(driver.Execer).Exec(ctx, text)
}

// Explain shows the plan of a statement of the connection.
func (s *sqlConn) Explain(ctx context.Context, st driver.Stmt, args []any, analyze bool) (driver.Plan, error) {
	return s.SQLConn.(driver.Explainer).Explain(ctx, st, args, analyze)
}

// analyzeSQL is what runs a statement and shows its plan with what it
// did: MariaDB's ANALYZE, MySQL 8.0.18's EXPLAIN ANALYZE; "" where the
// server has neither.
func (db *DB) analyzeSQL() string {
	switch {
	case db.mariaDB:
		return "ANALYZE"
	case versionAtLeast(db.serverVersion, 8, 0, 18):
		return "EXPLAIN ANALYZE"
	}
	return ""
}

// analyzeHow says how a plan with analyze is made, for Capabilities.
func (db *DB) analyzeHow() string {
	if a := db.analyzeSQL(); a != "" {
		return a
	}
	return "nothing more (MySQL before 8.0.18 has no EXPLAIN ANALYZE: the plan is not run)"
}

// explain is SQL text's Hooks.Explain: EXPLAIN of text with args, or
// with analyze the server's ANALYZE inside a transaction rolled back. A
// statement the server cannot analyze (MySQL's EXPLAIN ANALYZE takes
// only some) gets the plain plan, and How says why.
func (db *DB) explain(ctx context.Context, c *sql.Conn, text string, args []any, analyze bool) (driver.Plan, error) {
	how := db.analyzeSQL()
	if !analyze || how == "" {
		plan, err := plainPlan(ctx, c, text, args)
		if analyze {
			plan.How += " (" + db.product() + " " + db.serverVersion + " has no EXPLAIN ANALYZE: the statement was not run)"
		}
		return plan, err
	}
	if _, err := c.ExecContext(ctx, "START TRANSACTION"); err != nil {
		return driver.Plan{}, err
	}
	text2, err := query(ctx, c, how+" "+text, args)
	rolledBack := " (run once inside a transaction rolled back)"
	if _, rerr := c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil && err == nil {
		return driver.Plan{}, rerr
	}
	var warnings int
	if err := c.QueryRowContext(context.WithoutCancel(ctx), "SELECT @@warning_count").Scan(&warnings); err == nil && warnings > 0 {
		// 1196: some non-transactional changed tables couldn't be rolled back.
		rolledBack = " (run once inside a transaction rolled back; the server warned that changes to non-transactional tables were not undone)"
	}
	if err != nil {
		if n := number(err); n == erNotSupportedYet || n == erParseError {
			plan, perr := plainPlan(ctx, c, text, args)
			plan.How += " (" + db.product() + " cannot " + how + " this statement: " + serverMessage(err) + "; it was not run)"
			return plan, perr
		}
		return driver.Plan{}, err
	}
	return driver.Plan{Text: text2, How: how + rolledBack}, nil
}

// MySQL's error numbers for a statement it cannot analyze.
const (
	erParseError      = 1064
	erNotSupportedYet = 1235
)

// plainPlan is EXPLAIN of text with args, which does not run it. A parse
// error is of a statement EXPLAIN does not take (CREATE INDEX, SET; it
// takes SELECT, INSERT, REPLACE, UPDATE, DELETE), since text prepared:
// driver.ErrNoPlan.
func plainPlan(ctx context.Context, c *sql.Conn, text string, args []any) (driver.Plan, error) {
	t, err := query(ctx, c, "EXPLAIN "+text, args)
	if number(err) == erParseError {
		err = fmt.Errorf("mysql: EXPLAIN takes SELECT, INSERT, REPLACE, UPDATE and DELETE: %w (%v)", driver.ErrNoPlan, err)
	}
	return driver.Plan{Text: t, How: "EXPLAIN"}, err
}

// query runs q with args on c and writes its rows as a plan.
func query(ctx context.Context, c *sql.Conn, q string, args []any) (string, error) {
	rows, err := c.QueryContext(ctx, q, args...)
	if err != nil {
		return "", err
	}
	return sqltext.Tabular(rows)
}

// versionAtLeast reports whether a server version ("8.0.36",
// "8.0.36-log") is at least major.minor.patch.
func versionAtLeast(version string, major, minor, patch int) bool {
	want := [3]int{major, minor, patch}
	parts := strings.SplitN(version, ".", 3)
	for i := range want {
		if i >= len(parts) {
			return false
		}
		digits := parts[i]
		if j := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			digits = digits[:j]
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			return false
		}
		if n != want[i] {
			return n > want[i]
		}
	}
	return true
}

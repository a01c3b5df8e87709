package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/driver/sqlgen"
)

// costStatus are the SHOW GLOBAL STATUS variables of the database-wide
// Cost. Handler_commit counts the commits of every transaction, a
// statement's own under autocommit included, where Com_commit counts only
// COMMIT statements. MySQL has InnoDB's Innodb_rows_*; MariaDB 10.6 and
// later have not, but count Rows_read and Rows_sent over every engine.
var costStatus = []string{
	"Handler_commit", "Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads",
	"Innodb_rows_read", "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted",
	"Rows_read", "Rows_sent", "Performance_schema_digest_lost",
}

// psOffNote says what to do when performance_schema is off, as it is by
// default on MariaDB.
const psOffNote = "performance_schema is OFF, so the server counts nothing per statement: add performance_schema = ON under [mysqld] in its my.cnf and restart it (it cannot be turned on while the server runs)"

// Costs reads the server's counters: per statement from performance_schema's
// events_statements_summary_by_digest (found by STATEMENT_DIGEST() on
// MySQL 8 and by digestKey elsewhere; on MariaDB only statements sent as
// text, see preparedNote), for the database from SHOW GLOBAL STATUS.
func (db *DB) Costs(ctx context.Context, texts []string) (driver.Costs, error) {
	bound := make([]string, len(texts))
	for i, t := range texts {
		b, err := sqlgen.Bind(sqlgen.MySQL, t)
		if err != nil {
			return driver.Costs{}, badinput.New("MySQL statement: %v", err)
		}
		bound[i] = b.Text
	}
	c, err := db.pool.Conn(ctx)
	if err != nil {
		return driver.Costs{}, classify(err)
	}
	defer c.Close()
	out := driver.Costs{Source: "SHOW GLOBAL STATUS", Statements: make([]driver.Cost, len(texts))}
	status, err := readStatus(ctx, c)
	if err != nil {
		return out, err
	}
	out.Database = databaseCost(status)
	var psOn int
	if err := c.QueryRowContext(ctx, "SELECT @@innodb_page_size, @@performance_schema").Scan(&out.PageBytes, &psOn); err != nil {
		return out, classify(err)
	}
	for i := range out.Statements {
		out.Statements[i] = driver.UnknownCost
	}
	if psOn == 0 {
		out.Notes = append(out.Notes, psOffNote)
		return out, nil
	}
	if lost := status["Performance_schema_digest_lost"]; lost != "" && lost != "0" {
		out.Notes = append(out.Notes, "performance_schema_digests_size is full (Performance_schema_digest_lost = "+lost+"): statements with new digests are counted together, not as themselves; raise it in my.cnf")
	}
	notes, err := db.statementCosts(ctx, c, bound, out.Statements)
	out.Notes = append(out.Notes, notes...)
	if err != nil {
		return out, err
	}
	out.Source = "performance_schema.events_statements_summary_by_digest; SHOW GLOBAL STATUS"
	return out, nil
}

// readStatus reads costStatus.
func readStatus(ctx context.Context, c *sql.Conn) (map[string]string, error) {
	rows, err := c.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('"+strings.Join(costStatus, "', '")+"')")
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	status := map[string]string{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, classify(err)
		}
		// MySQL and MariaDB differ in the names' case.
		for _, n := range costStatus {
			if strings.EqualFold(n, name) {
				status[n] = value
			}
		}
	}
	return status, classify(rows.Err())
}

// databaseCost is the database-wide Cost of SHOW GLOBAL STATUS: the
// server's, every database's and every client's.
func databaseCost(status map[string]string) driver.Cost {
	get := func(names ...string) int64 {
		var sum int64
		for _, n := range names {
			v, err := strconv.ParseInt(status[n], 10, 64)
			if err != nil {
				return driver.Unknown
			}
			sum += v
		}
		return sum
	}
	examined := get("Innodb_rows_read")
	if examined == driver.Unknown {
		examined = get("Rows_read")
	}
	return driver.Cost{
		Calls:         get("Handler_commit"),
		LogicalReads:  get("Innodb_buffer_pool_read_requests"),
		PhysicalReads: get("Innodb_buffer_pool_reads"),
		// Rows returned and changed; unknown where either is not counted.
		Rows:         get("Rows_sent", "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted"),
		RowsExamined: examined,
		CPU:          driver.Unknown,
		Elapsed:      driver.Unknown,
	}
}

// statementCosts fills costs, one per bound text, from performance_schema
// and returns what it could not count. A statement with no entry has not
// run: its counted figures are zero. Logical and physical reads are not
// counted per statement by MySQL.
func (db *DB) statementCosts(ctx context.Context, c *sql.Conn, bound []string, costs []driver.Cost) ([]string, error) {
	var notes []string
	var digestOn string
	err := c.QueryRowContext(ctx, "SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = 'statements_digest'").Scan(&digestOn)
	if err != nil && !refused(err) && err != sql.ErrNoRows {
		return nil, classify(err)
	}
	if digestOn != "YES" {
		return append(notes, "performance_schema's statements_digest consumer is off, so statements are not counted by digest: UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME = 'statements_digest' (or performance-schema-consumer-statements-digest = ON in my.cnf)"), nil
	}
	cpu, err := hasColumn(ctx, c, "events_statements_summary_by_digest", "SUM_CPU_TIME")
	if err != nil {
		return nil, err
	}
	for i := range costs {
		costs[i] = driver.Cost{LogicalReads: driver.Unknown, PhysicalReads: driver.Unknown, CPU: driver.Unknown}
		if cpu {
			costs[i].CPU = 0
		}
	}
	if !cpu {
		notes = append(notes, db.product()+" "+db.serverVersion+" counts no CPU time per statement (SUM_CPU_TIME is MySQL 8.0.28's)")
	}
	notes = append(notes, "per statement, "+db.product()+" counts no logical or physical reads: the database's buffer pool figures include every statement's")
	if db.mariaDB {
		notes = append(notes, preparedNote)
	}
	return notes, db.digestCosts(ctx, c, bound, costs, cpu)
}

// preparedNote says that MariaDB counts no prepared statement per
// statement: its digests skip the binary protocol's executions, and
// prepared_statements_instances keeps COUNT_EXECUTE at 0 (MariaDB 10.11,
// checked by TestCosts).
const preparedNote = "MariaDB counts statements prepared through the binary protocol in no per-statement table (its digests skip their executions, and prepared_statements_instances never counts them): run with the simple protocol for per-statement figures"

// hasColumn reports whether a performance_schema table has a column.
func hasColumn(ctx context.Context, c *sql.Conn, table, column string) (bool, error) {
	var n int
	err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'performance_schema' AND TABLE_NAME = ? AND COLUMN_NAME = ?", table, column).Scan(&n)
	return n > 0, classify(err)
}

// digestCosts adds to costs the digest rows of the current database that
// each bound text matches. MySQL 8 computes a text's digest itself
// (STATEMENT_DIGEST); elsewhere the digest texts are matched by
// digestKey.
func (db *DB) digestCosts(ctx context.Context, c *sql.Conn, bound []string, costs []driver.Cost, cpu bool) error {
	cols := "DIGEST, DIGEST_TEXT, COUNT_STAR, SUM_TIMER_WAIT, SUM_ROWS_SENT + SUM_ROWS_AFFECTED, SUM_ROWS_EXAMINED"
	if cpu {
		cols += ", SUM_CPU_TIME"
	} else {
		cols += ", 0"
	}
	byDigest := !db.mariaDB && versionAtLeast(db.serverVersion, 8, 0, 0)
	want := make([]string, len(bound))
	for i, b := range bound {
		if byDigest {
			if err := c.QueryRowContext(ctx, "SELECT STATEMENT_DIGEST(?)", b).Scan(&want[i]); err != nil {
				return fmt.Errorf("mysql: STATEMENT_DIGEST of statement %d: %w", i+1, classify(err))
			}
		} else {
			want[i] = digestKey(b)
		}
	}
	rows, err := c.QueryContext(ctx, "SELECT "+cols+" FROM performance_schema.events_statements_summary_by_digest WHERE SCHEMA_NAME = DATABASE()")
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var digest, text sql.NullString
		var calls, timer, sent, examined, cpuTime int64
		if err := rows.Scan(&digest, &text, &calls, &timer, &sent, &examined, &cpuTime); err != nil {
			return classify(err)
		}
		for i, w := range want {
			if byDigest && digest.String != w || !byDigest && !digestMatches(w, text.String) {
				continue
			}
			costs[i].Calls += calls
			costs[i].Elapsed += timer / 1000 // picoseconds
			costs[i].Rows += sent
			costs[i].RowsExamined += examined
			if cpu {
				costs[i].CPU += cpuTime / 1000
			}
		}
	}
	return classify(rows.Err())
}

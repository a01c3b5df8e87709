// Package mysql is the MySQL and MariaDB driver, registered as "mysql" with
// "mariadb" as a second scheme: go-sql-driver/mysql, through database/sql for
// the DB's own statements and directly for the sessions'.
//
// # URLs
//
//	mysql://user:password@host:3306/database?option=value&…
//
// The port defaults to 3306; the user and the database are required. The
// password may also come from DBPROBE_PASSWORD or --password-file. Options
// (anything else is refused with this list):
//
//	tls=true|false|skip-verify|preferred   TLS, as go-sql-driver names its modes
//	timeout=10s                            connect timeout (default 10s)
//	read_timeout=, write_timeout=          socket timeouts
//	innodb_lock_wait_timeout=N             seconds a row lock is waited for
//	lock_wait_timeout=N                    seconds a table lock is waited for
//	max_statement_time=S                   MariaDB statement timeout, seconds
//	max_execution_time=MS                  MySQL statement timeout, milliseconds
//	max_heap_table_size=4G                 largest ENGINE=MEMORY table
//
// The session variables are set on every connection; a server that
// does not know one (MySQL has no max_statement_time) is a bad-input error
// at Open.
//
// # Tables
//
// The key and the fields are VARBINARY: the values are arbitrary bytes,
// nothing is converted between character sets, and keys compare byte by
// byte, the order scans read in. --table-type disk is ENGINE=InnoDB;
// memory is ENGINE=MEMORY with a B-tree primary key, whose rows are lost
// when the server restarts, which is not transactional, and whose size
// limit is max_heap_table_size when it is created (raised as far as the
// server allows unless the URL sets it). MySQL has no non-durable logged
// table of its own: nondurable is refused.
//
// The driver owns only the tables it creates: CreateTable records each in
// the marker table dbprobe_tables with its identity (its CREATE_TIME and a
// random id in its comment), Inspect reports from it, and DropTable refuses
// a table that is not recorded there with that identity. MySQL commits DDL at once,
// so a named lock (GET_LOCK) rather than a transaction keeps two clients'
// table changes apart.
//
// # Sessions
//
// Each session opens one go-sql-driver connection of its own, not through
// database/sql, and prepares its statements on it: database/sql and
// go-sql-driver each spend a goroutine hand-over per statement on watching
// a context, 40% of the client's CPU per operation (see conn). The session
// watches its caller's context once for many statements instead. When it
// ends under a statement, the session closes the socket, KILLs the server
// thread, which would otherwise go on running the statement, and opens a
// new connection for its next operation.
//
// InsertBatch uses LOAD DATA LOCAL INFILE, streamed from memory, when
// Options.BulkLoad allows it and the server does (local_infile=ON); else,
// and after the server refused it, multi-row INSERTs. Info's "load path"
// setting says which, and why.
//
// # Settings
//
// Info reports the server variables that change what an operation costs
// or whether it succeeds (settings.go lists them and why): the isolation,
// autocommit and the lock and statement timeouts as a session has them,
// read on a pool connection, opened as the sessions' are. A session value
// the URL set says "(from the URL)"; one that differs from the global
// value otherwise (the server's init_connect) says so with the global
// value; a variable the server lacks (MySQL's max_execution_time on
// MariaDB) says that rather than being left out. MariaDB before 11.1
// names the isolation tx_isolation: Info calls it transaction_isolation.
//
// # Durability
//
// --durability full and delayed set innodb_flush_log_at_trx_commit to 1 or
// 2. It is server-wide: Open changes it only when it differs, needs SUPER
// (MariaDB) or SYSTEM_VARIABLES_ADMIN (MySQL 8) to do so, and Close puts
// the previous value back. MySQL has no per-transaction durability.
//
// # Procedures
//
// On the procedure path each table has five procedures,
// dbprobe_<table>_read, _scan, _update, _insert and _delete. Read and scan
// return every field; update takes every field and keeps a column whose
// argument is NULL; update and delete return ROW_COUNT() as a result set,
// so that a missing key is still ErrNotFound through CALL.
//
// # Errors
//
// Deadlocks (1213) and lock wait timeouts (1205) are conflicts, retried by
// the runner; statement timeouts (3024, 1969) are timeouts; a broken
// connection is a lost connection (2013 when the server sent no number); a
// duplicate key (1062) is not retryable. A full disk or table, a read-only
// server or transaction and a refused privilege are fatal (errors.go).
// Codes are MySQL's error numbers, named by their ER_ symbol where MySQL
// and MariaDB agree on it (errnames.go).
package mysql

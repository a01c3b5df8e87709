// Package sqlserver is the SQL Server and Azure SQL driver, registered as
// "sqlserver" with the schemes sqlserver, mssql and azuresql:
// github.com/microsoft/go-mssqldb through database/sql.
//
// The URL is go-mssqldb's own form, sqlserver://user:password@host:1433?database=NAME
// plus any go-mssqldb option (encrypt, TrustServerCertificate, dial
// timeout, …). With fedauth=ActiveDirectoryDefault (or another Entra ID
// method) it connects through go-mssqldb's azuread package, the "azuresql"
// driver; otherwise with a SQL Server login. Open proves the server answers
// and the login works, and turns what the user can fix (wrong password,
// missing database, unreachable host, a malformed option) into one-line
// bad-input errors without the password (url.go, errors.go). go-mssqldb
// does not watch the context while it logs in, so connect.go bounds each
// login by the context it runs under.
//
// The knobs (settings.go): table type disk is a clustered rowstore table;
// memory and nondurable are memory-optimized tables (DURABILITY =
// SCHEMA_AND_DATA or SCHEMA_ONLY) with a hash primary key of
// Options.BucketCount buckets and a range index for ordered scans, after
// Open checks that the database can hold them and turns
// MEMORY_OPTIMIZED_ELEVATE_TO_SNAPSHOT on. Durability full and delayed set
// the database's DELAYED_DURABILITY (DISABLED, FORCED, or ALLOWED with
// every write committed WITH (DELAYED_DURABILITY = ON) for the transaction
// scope). Open changes an option only when it differs, only with the ALTER
// permission (else bad input, nothing changed), reads it back for Info, and
// Close puts it back. The procedure path calls procedures
// dbprobe_<table>_read/scan/update/insert/delete: natively compiled for a
// memory-optimized table, interpreted T-SQL for a disk table; the last
// session to close after a load has the natively compiled ones recompiled
// (sp_recompile), since their plans were made for an empty table. Info's
// bucket_count is the one the server uses, read back from
// sys.hash_indexes once the table exists.
//
// dialect.go holds every statement as pure text-building functions, tested
// against golden files in testdata/ (go test -run TestGolden -update
// rewrites them). sqlserver.go is Open, Info, Inspect and the table
// lifecycle; session.go gives each worker its own connection, its
// procedure calls prepared and its statements sent through sp_executesql
// with their parameters declared at the columns' lengths (one plan per
// statement); errors.go classifies SQL Server's error numbers for the
// runner (In-Memory OLTP conflicts and deadlocks are retryable, and Azure
// SQL's transient errors are retried on a new connection; a full filegroup
// or log, a quota, a read-only database and a refused permission are
// fatal) and names them (errnames.go); azure.go tells Azure's own
// failures in dbprobe's words (an In-Memory OLTP quota reached, a database
// not available at Open, which Open waits for a while).
//
// The driver owns only the tables it creates: CreateTable records each in
// the marker table dbprobe_tables of the user's default schema with its
// identity (object id and create_date), Inspect reports from it, and
// DropTable refuses a table that is not recorded there with that identity.
package sqlserver

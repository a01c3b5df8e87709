// Package sqlgen builds the SQL text that the four SQL drivers (postgres,
// mysql, sqlite, sqlserver) send for the key-value operations, binds the
// :name parameters of SQL text the user wrote to a dialect's placeholders,
// and cuts a script the user wrote into its statements (Script) by the
// rules of the database's own client: psql's dollar quotes, sqlcmd's GO
// lines, the mysql client's DELIMITER.
//
// A Dialect is the little that differs between them for these statements:
// how an identifier is delimited, how the n-th parameter is written ($n,
// ?, @pn), and where a row limit goes (LIMIT n after the statement, or
// TOP (n) after SELECT). Everything else — column lists, the read, scan,
// update, insert and delete of one table — is written once, here, so that
// the drivers' statements cannot drift apart by accident; what really
// differs (PostgreSQL's COPY, MySQL's LOAD DATA, SQL Server's procedures)
// stays in each driver.
//
// Nothing here touches a connection: text in, text out, and each driver
// pins what it sends with tests of its own (SQL Server's golden files
// among them).
package sqlgen

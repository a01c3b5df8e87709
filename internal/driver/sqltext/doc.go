// Package sqltext runs SQL text a user wrote on a database/sql connection:
// the driver.SQLConn of every driver built on database/sql (MySQL/MariaDB,
// SQLite, SQL Server), which differ only in the Hooks. It also cuts a
// user's script into statements for every SQL driver (Script).
package sqltext

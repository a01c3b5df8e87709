// Package sqltext runs SQL text a user wrote on a database/sql connection:
// the driver.SQLConn of every driver built on database/sql (MySQL/MariaDB,
// SQLite, SQL Server), which differ only in the Hooks. Opener finds the
// connection that driver.SQLOptions ask for (the DB's pool, a pool of
// connections that put their parameters into the text, a connection of
// its own), and Tabular writes a plan that comes back as rows. It also
// cuts a user's script into statements for every SQL driver (Script).
package sqltext

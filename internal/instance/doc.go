// Package instance starts, crashes, freezes and restarts a throwaway local
// database server: PostgreSQL, MariaDB (MySQL) or Redis, for the checks that need
// a server dbprobe controls itself — crash durability, server restarts and
// stalls mid-run.
//
// Start makes a new data directory in a temporary directory, picks a free
// port on 127.0.0.1 (the server listens there only; its unix socket stays
// in the temporary directory), creates a user and database named dbprobe
// with a random password, and waits until the server accepts logins. URL
// returns a dbprobe URL for it, password included.
//
// For fault tests the server can be placed elsewhere: its data directory
// on a file system of the caller's (Options.DataDir, e.g. a small one to
// fill), with extra initdb or mariadb-install-db arguments
// (Options.InitArgs), and listening on another address (Options.Addr)
// inside a network namespace (Options.Netns, as root), so that the link
// to it can be cut or degraded. The server then accepts password logins
// from its subnet.
//
// Kill (SIGKILL), Pause (SIGSTOP) and Resume (SIGCONT) reach every process
// of the server: the main one and every process descended from it, found
// in /proc (PostgreSQL's backends each start a session of their own, so a
// process group would miss them). Kill freezes them all before killing
// any, so PostgreSQL's backends, WAL writer and checkpointer die together
// with the postmaster and none gets to flush anything on the way out —
// which is what a crash-durability check needs. Each server also runs in a
// process group of its own, away from dbprobe's terminal signals, and is
// killed by the kernel when dbprobe dies, even by SIGKILL; the temporary
// directory it leaves then is removed by the next Start, which removes
// every server directory whose owner (the dbprobe process named in it) no
// longer runs. Restart starts the server again
// on the same data directory and port, crash recovery included; Stop is a
// clean fast shutdown; Close stops (or kills) the server and removes every
// file, and may be called more than once.
//
// PostgreSQL refuses to run as root: as root it runs as the `postgres` OS
// user and its files belong to that user. MariaDB runs as the current user
// (--user=root as root). Binaries are found as scripts/lib/postgres.sh and
// mariadb.sh find them (the newest /usr/lib/postgresql/*/bin, else PATH;
// mariadbd or mysqld on PATH or in /usr/sbin), or in Options.Bindir. When
// they are missing Start returns an error that wraps ErrNotInstalled and
// names the Debian package to install.
//
// Redis runs from a configuration file in its directory (the password in
// it, readable by its owner only), with an append-only file synced every
// second; its URL is redis://:PASSWORD@127.0.0.1:PORT/0.
package instance

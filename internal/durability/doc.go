// Package durability is the crash-durability check: it proves, rather than
// takes on faith, that a database keeps every commit it acknowledged when
// it is killed.
//
// The check runs only on a database it makes itself — a throwaway
// PostgreSQL or MariaDB (internal/instance) or a new SQLite file — because
// it kills it. Each cycle, several writers insert rows, one commit each,
// and every commit the database acknowledges is appended to a client log
// that is fsynced as it goes, so the record of what was promised is on disk
// before the crash is judged. At a random moment the server gets SIGKILL
// (every process at once, so that none flushes anything on the way out);
// it is restarted, crash recovery included, and every acknowledged row is
// looked for. A cycle reports acknowledged writes, lost ones, whether the
// lost ones are the most recent acknowledged (a tail, the expected shape
// of asynchronous commit) or scattered (a real bug), and rows that were
// committed although their acknowledgement never arrived (in flight at
// the kill: allowed).
//
// The check prints its report as it goes and, given an Output, writes the
// same as dbprobe's common JSON result (internal/result, experiment
// "durability"): a header, a cycle record once each cycle is checked,
// then the totals and the verdict. A check killed on the way keeps its
// checked cycles on disk, and dbprobe recover totals them.
//
// SQLite has no server: the process that writes is the one to kill. The
// check re-runs its own executable as a child (ChildEnv in the
// environment) that writes and reports each acknowledged commit on its
// standard output; the parent logs the acknowledgements and kills the
// child. A program (or test binary) that runs Run for SQLite must call
// IsChild and ChildMain first thing in main (or TestMain).
//
// A process kill tests what the database does with a commit before it
// acknowledges it, not what the operating system or the disk does after:
// with MySQL innodb_flush_log_at_trx_commit=2 or SQLite synchronous=OFF
// (or NORMAL in WAL mode) acknowledged commits sit in the OS page cache,
// which survives a process kill and not an OS crash or power loss. The
// report says so for each database and setting (Caveat), so that 0 lost is
// never read as more than it proves.
package durability

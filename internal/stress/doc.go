// Package stress is the query stress experiment (dbprobe stress): SQL a
// user wrote, run by N threads × M iterations on the runner's worker
// seam, as SQLQueryStress runs it but measured as YCSB's runs are: an HDR
// series per statement and per iteration, errors by code, retries, the
// per-second series, the monitor and its verdict, and the server's own
// costs per statement and per iteration.
//
// What runs is a Work (work.go): the scripts an iteration chooses from
// and, for each iteration, which one runs with which parameter values.
// The --sql files with their parameter sources (a query run once, a CSV
// file, generators drawn per iteration: params.go) are one Work; the
// built-in OLTP mix plugs in as another, its choices a pure function of
// the iteration number.
//
// Parameters are written :name and bound by the driver, never spliced
// into the text. Values from a CSV file are strings, which every
// database converts to the parameter's type (PostgreSQL parses a string
// sent for an integer parameter; MySQL and SQLite convert it by the
// column's type); values from a --params-query are what the driver read
// (integers as int64, text as string, other types as their text), and
// generated ones are int64.
//
// Run is the experiment around them (experiment.go): the files are read
// before anything connects; --setup runs once; every statement is
// prepared (checked by the database) and its plan taken before anything
// is measured; the iterations run beside the monitor; the server's costs
// are read before and after the measured part (summary.go); --teardown
// runs once setup has, even after Ctrl-C or a failure.
package stress

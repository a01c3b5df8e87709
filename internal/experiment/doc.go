// Package experiment holds what every experiment shares around its own
// work: the target it runs on (--db, its password, a default SQLite
// database), the outputs its events go to (the text, --out, --influx-out,
// --metrics-addr), the console a person watches (the live progress line
// on a terminal, -s, --quiet), the monitor beside each phase and the verdict drawn
// from it, the environment a header names, the interrupts that stop
// a command early, and what a fault is met with (faults.go): the
// database named by driver and address, the connections its server still
// accepts, and the file system that holds its data and its free space. An experiment (internal/ycsb, later storage and stress)
// builds on these and on the runner; the commands in internal/cli only
// turn flags into an experiment's typed configuration.
package experiment

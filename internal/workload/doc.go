// Package workload says what to run: the YCSB core workload's operation
// mix, record shape, key choice and values. It produces operations and
// checks what reads return; it never talks to a database (the runner does).
package workload

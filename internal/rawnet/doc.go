// Package rawnet gives a TCP connection reads and writes that do not hand
// the worker's processor back to Go's scheduler for every system call.
//
// A Go read or write on a socket enters the runtime's system-call state,
// so that another thread can run goroutines if the call blocks. Sockets
// from package net never block, but a loopback write also runs the
// receiving side's TCP work and can take tens of microseconds: the
// runtime's monitor takes the processor from such a call and wakes
// another thread for it, and the call's own thread, when it returns,
// finds the processor gone and sleeps. Conn makes each read and write one
// raw system call on the non-blocking socket (syscall.RawSyscall through
// the connection's syscall.RawConn), and waits in the poller as package
// net does when the socket has nothing to read or no room to write;
// deadlines, Close and every other method are the TCP connection's own.
// On PostgreSQL workload A at 32 threads on 2 cores that halves the
// context switches (150,000 to 74,000 per run; bench/RESULTS.md).
//
// DBPROBE_RAWNET=off leaves connections as package net makes them, so
// that a user can rule rawnet out of a result; on systems other than
// Linux they always are.
package rawnet

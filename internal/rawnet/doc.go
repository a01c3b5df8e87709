// Package rawnet gives a TCP connection reads and writes that do not hand
// the worker's processor back to Go's scheduler for every system call.
//
// A Go read or write on a socket enters the runtime's system-call state,
// so that another thread can run goroutines if the call blocks. Sockets
// from package net never block (they are non-blocking, and a call that
// would block returns EAGAIN and the goroutine waits in the poller), but
// a loopback write also runs the receiving side's TCP work and can take
// tens of microseconds. The runtime's monitor thread takes the processor
// from such a call and wakes another thread for it; when the call
// returns, its thread finds the processor gone and sleeps. Measured on
// PostgreSQL workload A at 32 threads on 2 cores (perf stat, 200,000
// operations): 150,000 context switches, 42,000 futex and 42,000
// nanosleep calls per run, against about 65,000, 25 and 0 for pgbench.
//
// Conn makes each read and write one raw system call on the non-blocking
// socket (syscall.RawSyscall through the connection's syscall.RawConn),
// and waits in the poller as package net does when the socket has nothing
// to read or no room to write; deadlines, Close and every other method are
// the TCP connection's own. The same runs measured 74,000 context
// switches, 10,000 futex and 4,000 nanosleep calls. On systems other than
// Linux, Wrap returns the connection unchanged.
package rawnet

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// In WAL mode a commit appends pages to the WAL, and a checkpoint copies
// them back into the database file: it reads the WAL, writes the file and,
// with synchronous=NORMAL, syncs both. SQLite runs a checkpoint inside the
// commit that finds 1000 pages in the WAL, so with one writer the writer
// pays for it while every other write waits: measured here under workload A,
// the syncs alone, all from checkpoints, took 13% of the writer's time, and
// checkpoint copies were a good part of its file reads and writes besides.
// The checkpointer runs those checkpoints from a connection of its own, on
// another core, while the writer goes on.
//
// A checkpoint that runs beside the writer never quite finishes, though:
// the writer appends while it copies. And the WAL only starts over from its
// beginning after a checkpoint that copied everything; without that it
// grows for ever (measured: 10,728 pages after 5,000 commits). So the
// writer keeps SQLite's own automatic checkpoint, at walRestartPages
// instead of 1000: by then the checkpointer has copied most of it, the
// writer copies what came after its last pass, and its next commit starts
// the WAL over. If the checkpointer falls behind, the writer's checkpoint does the
// whole copy, as SQLite would have done anyway. (Measured under workload A:
// a WAL left to grow gave some 20% more ops/s over a few seconds, but only
// by putting off copying that a longer run must do; finishing right after
// each background pass instead of at 4000 pages made no difference, and
// with passes every 4000 records it was lower in 6 of 6 pairs.)
//
// With synchronous=NORMAL a checkpoint syncs the WAL before it copies and
// the database file once it has copied everything. A background pass beside
// the writer rarely copies everything, so it never synced the database file,
// and the writer's checkpoint at walRestartPages then synced every page the
// background passes had copied, several MB, while all writes waited: 8% of
// the writer's CPU samples, with stalls of milliseconds. So after each pass
// the checkpointer syncs both files itself; the writer's sync finds little
// left to write. An extra sync never breaks SQLite's ordering (WAL durable
// before the database file is overwritten), it only makes data durable
// sooner. Under synchronous=OFF SQLite syncs nothing, and nor does the
// checkpointer. Measured under workload A at 8 threads: the time a write
// spends in the writer's queue and transaction fell from about 75 to 47 µs,
// and throughput was higher in 7 of 7 alternating pairs.

//
// Each pass, and above all its syncs, costs a fixed amount besides the
// pages it copies, and on a kernel without preemption (PREEMPT_NONE, as on
// the machine measured) a sync's writeback holds its core until it is
// done. With a pass every 1000
// records, a 400,000-operation run of workload A at 8 threads made 199
// passes, 4.2–5.0 s of the checkpointer's time (syncs 2.5–3.0 s); every
// 4000 records, 49 passes took 3.4–3.7 s for the same pages copied.
// Throughput was higher in 19 of 22 alternating pairs (medians about
// 48,500 → 51,500 ops/s, the pairs' median ratio 1.11×), and in 3 of 3
// runs three times as long, so not by leaving copies for after the run.
// 2000 records was in between, and 8000 or 16000, or a restart at 32,000
// pages, gave nothing more while the WAL grew.

const (
	// checkpointEvery is how many written records start a background
	// checkpoint, a page or so per record: 16 MB of 4 KB pages.
	checkpointEvery = 4000
	// walRestartPages is the WAL size at which the writer finishes a
	// checkpoint itself (its wal_autocheckpoint): the WAL file grows to
	// 64 MB of 4 KB pages, and SQLite removes it when the last
	// connection closes.
	walRestartPages = 4 * checkpointEvery
)

// checkpointSQL copies what it can without waiting for readers or the
// writer. Readers that still need old pages hold back only those pages,
// which a later checkpoint copies.
const checkpointSQL = "PRAGMA wal_checkpoint(PASSIVE)"

// checkpointer runs checkpoints on its own connection when the writer asks.
type checkpointer struct {
	conn    *sql.Conn
	stmt    *sql.Stmt
	kick    chan struct{}
	quit    chan struct{}
	stopped chan struct{}
	stop    sync.Once
	// err is the first checkpoint failure, reported by Close. Guarded by
	// stopped: only read after the goroutine ended.
	err error
	// done counts the checkpoints run, for the monitor.
	done atomic.Uint64
	// files are the database file and its WAL, synced after each pass
	// (none under synchronous=OFF); synced counts the passes after which
	// they were.
	files  *syncFiles
	synced atomic.Uint64
}

// syncFiles are the files the checkpointer syncs, each opened once and
// kept open until closeFiles, after the last SQLite connection of the
// database has closed.
//
// POSIX advisory locks belong to a process and an inode, not to a
// descriptor: closing any descriptor of the database file drops every
// lock the process holds on it, SQLite's own among them, while SQLite
// goes on believing it holds them. In WAL mode each connection keeps a
// SHARED lock on the database file for as long as it is open; without
// it, another process that closes its last connection to the file takes
// itself for the last one and checkpoints and deletes the WAL and the
// shared-memory index under the running dbprobe (measured with a version
// that opened and closed the file for every sync: none of dbprobe's locks
// left after the first background pass, and a `SELECT count(*)` from
// another process removed the -wal and -shm files mid-run). Under the
// default unix-excl VFS the lock lost would be the process's exclusive
// one, which alone keeps other processes out. The WAL carries no lock,
// but is kept open the same way.
type syncFiles struct {
	paths []string
	open  []*os.File // nil until the file exists
}

func newSyncFiles(paths ...string) *syncFiles {
	return &syncFiles{paths: paths, open: make([]*os.File, len(paths))}
}

// sync flushes each file to the disk. A file that does not exist yet (the
// WAL before the first connection opened it) has nothing to flush.
func (f *syncFiles) sync() error {
	for i, p := range f.paths {
		if f.open[i] == nil {
			file, err := os.Open(p)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			f.open[i] = file
		}
		if err := f.open[i].Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", p, err)
		}
	}
	return nil
}

// close closes the files; it must run only once no SQLite connection of
// the database is open in this process (see syncFiles).
func (f *syncFiles) close() {
	for i, file := range f.open {
		if file != nil {
			// A descriptor only read from and synced has nothing left to
			// report on close.
			_ = file.Close()
			f.open[i] = nil
		}
	}
}

func startCheckpointer(ctx context.Context, pool *sql.DB) (*checkpointer, error) {
	c, err := pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var file string
	var synchronous int
	if err := c.QueryRowContext(ctx, mainFileSQL).Scan(&file); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&synchronous); err != nil {
		c.Close()
		return nil, err
	}
	// synchronous=OFF asked SQLite never to sync: neither does dbprobe.
	var files *syncFiles
	if synchronous > 0 {
		files = newSyncFiles(file, file+"-wal")
	}
	stmt, err := c.PrepareContext(ctx, checkpointSQL)
	if err != nil {
		c.Close()
		return nil, err
	}
	cp := &checkpointer{
		conn: c, stmt: stmt, files: files,
		// One kick can wait while a checkpoint runs; more would only
		// repeat it.
		kick:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go cp.run()
	return cp, nil
}

func (cp *checkpointer) run() {
	defer close(cp.stopped)
	for {
		select {
		case <-cp.quit:
			return
		case <-cp.kick:
		}
		err := checkpoint(cp.stmt)
		if err == nil {
			cp.done.Add(1)
			if cp.files != nil {
				if err = cp.files.sync(); err == nil {
					cp.synced.Add(1)
				}
			}
		}
		if err != nil && cp.err == nil {
			cp.err = err
		}
	}
}

// checkpoint runs one passive checkpoint. Its row (busy, WAL frames, frames
// copied) needs no action: frames left behind go with the next one.
func checkpoint(stmt *sql.Stmt) error {
	var busy, logFrames, copied int
	return stmt.QueryRowContext(bg).Scan(&busy, &logFrames, &copied)
}

// request asks for a checkpoint and reports whether the checkpointer took
// the request; it never waits.
func (cp *checkpointer) request() bool {
	select {
	case cp.kick <- struct{}{}:
		return true
	default:
		return false
	}
}

// closeFiles closes the synced files; the DB calls it once every SQLite
// connection of the database has closed (see syncFiles).
func (cp *checkpointer) closeFiles() {
	if cp.files != nil {
		cp.files.close()
	}
}

// close stops the goroutine and releases its connection; it returns the
// first checkpoint failure, if any. The synced files stay open until
// closeFiles.
func (cp *checkpointer) close() error {
	cp.stop.Do(func() {
		close(cp.quit)
		<-cp.stopped
		closeStmt(cp.stmt)
		if err := cp.conn.Close(); err != nil && cp.err == nil {
			cp.err = err
		}
	})
	return cp.err
}

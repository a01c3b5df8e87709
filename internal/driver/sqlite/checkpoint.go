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
// them back into the database file, syncing both under synchronous=NORMAL.
// SQLite runs one inside the commit that finds 1000 pages in the WAL, so
// the one writer pays for it while every other write waits (its syncs
// alone took 13% of the writer's time under workload A). The checkpointer
// runs those checkpoints from a connection of its own, on another core,
// while the writer goes on.
//
// A checkpoint beside the writer never quite finishes, since the writer
// appends while it copies, and the WAL starts over only after one that
// copied everything: left alone it grows for ever. So the writer keeps
// SQLite's automatic checkpoint, at walRestartPages instead of 1000: by
// then the checkpointer has copied most of the WAL, the writer copies the
// rest and its next commit starts the WAL over. If the checkpointer falls
// behind, the writer does the whole copy, as SQLite would have.
//
// SQLite syncs the database file only after a checkpoint that copied
// everything, which a pass beside the writer rarely does; the writer's
// checkpoint would then sync every page the passes had copied while all
// writes wait. So the checkpointer syncs both files after each pass (none
// under synchronous=OFF). An extra sync never breaks SQLite's ordering
// (the WAL durable before the file is overwritten); it only makes data
// durable sooner. A write's time in the writer's queue and transaction
// fell from about 75 to 47 µs.
//
// Each pass, above all its syncs, costs a fixed amount besides the pages
// it copies, so passes come every checkpointEvery records rather than
// every 1000: 1.11× the throughput of workload A at 8 threads
// (bench/RESULTS.md).

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
// shared-memory index under the running dbprobe (a `SELECT count(*)` from
// Python's sqlite3 did, when the checkpointer reopened the file for each
// sync). Under the default unix-excl VFS the lock lost would be the
// process's exclusive one, which alone keeps other processes out. The WAL
// carries no lock, but is kept open the same way.
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

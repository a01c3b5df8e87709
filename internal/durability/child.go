package durability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// ChildEnv is the environment variable that makes a process the SQLite
// writer of a check; it holds the child's orders as JSON.
const ChildEnv = "DBPROBE_DURABILITY_CHILD"

// ackPrefix starts each acknowledgement line a child prints, so that any
// other output is never taken for one.
const ackPrefix = "ack "

// childOrders is what a child is told to do.
type childOrders struct {
	Path       string `json:"path"`
	Cycle      int    `json:"cycle"`
	Writers    int    `json:"writers"`
	Durability string `json:"durability"`
}

// IsChild reports whether this process was started as a check's SQLite
// writer; main (or TestMain) must then run ChildMain and nothing else.
func IsChild() bool { return os.Getenv(ChildEnv) != "" }

// ChildMain writes rows to the SQLite file the parent named until it is
// killed, printing "ack KEY" on out for each acknowledged commit before
// committing the next. It returns only on an error.
func ChildMain(ctx context.Context, out io.Writer) error {
	var o childOrders
	if err := json.Unmarshal([]byte(os.Getenv(ChildEnv)), &o); err != nil {
		return fmt.Errorf("%s: %w", ChildEnv, err)
	}
	d, err := driver.ParseDurability(o.Durability)
	if err != nil {
		return err
	}
	cfg := Config{Database: SQLite, Durability: d}
	db, err := openDB(ctx, sqliteURL(o.Path), cfg, o.Writers)
	if err != nil {
		return err
	}
	defer db.Close()
	var mu sync.Mutex
	var failed error
	ack := func(key string, _ time.Time) {
		mu.Lock()
		defer mu.Unlock()
		// Unbuffered: the acknowledgement is on the pipe before this
		// writer commits again, so a kill loses none the parent should see.
		if _, err := io.WriteString(out, ackPrefix+key+"\n"); err != nil && failed == nil {
			failed = err
		}
	}
	if err := write(ctx, db, o.Cycle, o.Writers, ack); err != nil {
		return err
	}
	return failed
}

func sqliteURL(path string) string {
	return (&url.URL{Scheme: "sqlite", Path: path}).String()
}

// sqliteTarget is an SQLite file that a child process writes.
type sqliteTarget struct {
	path string
	cfg  Config
}

func newSQLiteTarget(cfg Config, dir string) (*sqliteTarget, error) {
	return &sqliteTarget{path: filepath.Join(dir, "durability.db"), cfg: cfg}, nil
}

func (t *sqliteTarget) database() Database { return SQLite }
func (t *sqliteTarget) url() string        { return sqliteURL(t.path) }
func (t *sqliteTarget) version() string    { return "" }
func (t *sqliteTarget) close()             {}

// restart has nothing to start: opening the file after the kill is
// SQLite's recovery, and readKeys does that.
func (t *sqliteTarget) restart(context.Context) error { return nil }

func (t *sqliteTarget) writeUntilCrash(ctx context.Context, cycle int, crashAfter time.Duration, log *ackLog) (time.Time, error) {
	exe, err := os.Executable()
	if err != nil {
		return time.Time{}, fmt.Errorf("find this program to re-run as the SQLite writer: %w", err)
	}
	orders, err := json.Marshal(childOrders{Path: t.path, Cycle: cycle, Writers: t.cfg.Writers, Durability: t.cfg.Durability.String()})
	if err != nil {
		return time.Time{}, err
	}
	cmd := exec.Command(exe, t.cfg.ChildArgs...)
	cmd.Env = append(os.Environ(), ChildEnv+"="+string(orders))
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, left: 4096}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return time.Time{}, err
	}
	if err := cmd.Start(); err != nil {
		return time.Time{}, fmt.Errorf("start the SQLite writer: %w", err)
	}
	first := newFirstAck(log)
	eof := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if key, ok := strings.CutPrefix(sc.Text(), ackPrefix); ok {
				first.record(key, time.Now())
			}
		}
		// Acknowledgements still in the pipe were printed before the kill:
		// they count, so the pipe is read to its end.
		eof <- cmd.Wait()
	}()
	kill := func() error {
		if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return err
		}
		return nil
	}
	killedAt, stopped, err := crashCycle(ctx, first.seen, eof, crashAfter, kill)
	if !stopped {
		<-eof
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("cycle %d: SQLite writer: %v: %s", cycle, err, strings.TrimSpace(stderr.String()))
	}
	return killedAt, nil
}

// limitedWriter keeps the first bytes written to it and drops the rest.
type limitedWriter struct {
	w    io.Writer
	left int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > l.left {
		p = p[:l.left]
	}
	l.left -= len(p)
	l.w.Write(p)
	return n, nil
}

package durability

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// rowKey names the row a writer commits: cycle, writer and sequence, so
// that a missing row says which commit it was.
func rowKey(cycle, writer int, seq int64) string {
	return fmt.Sprintf("c%04d-w%03d-%010d", cycle, writer, seq)
}

// cyclePrefix is the prefix of every key of a cycle.
func cyclePrefix(cycle int) string { return fmt.Sprintf("c%04d-", cycle) }

// write runs writers sessions, each inserting rows one commit at a time
// until ctx ends or an insert fails (the kill breaks every connection).
// ack is called with each row's key once its commit was acknowledged. It
// returns the first error when every writer stopped.
func write(ctx context.Context, db driver.DB, cycle, writers int, ack func(key string, at time.Time)) error {
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = writeRows(ctx, db, cycle, w, ack)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func writeRows(ctx context.Context, db driver.DB, cycle, writer int, ack func(string, time.Time)) error {
	s, err := db.Session(ctx, table)
	if err != nil {
		return err
	}
	defer s.Close()
	value := bytes.Repeat([]byte{'d'}, table.FieldLength)
	values := [][]byte{value}
	for seq := int64(0); ctx.Err() == nil; seq++ {
		key := rowKey(cycle, writer, seq)
		if err := s.Insert(ctx, []byte(key), values); err != nil {
			return err
		}
		ack(key, time.Now())
	}
	return ctx.Err()
}

// ackLog is the client's record of acknowledged commits: a line per
// commit, "key unix-nanoseconds", appended and fsynced in batches by one
// goroutine so that writers never wait for each other's fsync.
type ackLog struct {
	f    *os.File
	ch   chan ackEntry
	done chan struct{}
	err  error
}

type ackEntry struct {
	key string
	at  time.Time
}

func openAckLog(path string) (*ackLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	l := &ackLog{f: f, ch: make(chan ackEntry, 1<<14), done: make(chan struct{})}
	go l.loop()
	return l, nil
}

// record logs an acknowledged commit.
func (l *ackLog) record(key string, at time.Time) { l.ch <- ackEntry{key, at} }

func (l *ackLog) loop() {
	defer close(l.done)
	w := bufio.NewWriterSize(l.f, 1<<16)
	var line []byte
	for e := range l.ch {
		line = append(line[:0], e.key...)
		line = append(line, ' ')
		line = strconv.AppendInt(line, e.at.UnixNano(), 10)
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil && l.err == nil {
			l.err = err
		}
		if len(l.ch) == 0 {
			l.sync(w)
		}
	}
	l.sync(w)
}

func (l *ackLog) sync(w *bufio.Writer) {
	if err := w.Flush(); err != nil && l.err == nil {
		l.err = err
	}
	if err := l.f.Sync(); err != nil && l.err == nil {
		l.err = err
	}
}

// close writes and fsyncs what is left and closes the file. Nothing may
// call record after.
func (l *ackLog) close() error {
	close(l.ch)
	<-l.done
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = err
	}
	if l.err != nil {
		return fmt.Errorf("client log: %w", l.err)
	}
	return nil
}

// readAckLog reads the client log back from disk, in the order the
// acknowledgements arrived.
func readAckLog(path string) ([]ackEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []ackEntry
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" {
			continue
		}
		key, nanos, ok := strings.Cut(line, " ")
		n, err := strconv.ParseInt(nanos, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("client log %s line %d is damaged: %q", path, i+1, line)
		}
		out = append(out, ackEntry{key: key, at: time.Unix(0, n)})
	}
	return out, nil
}

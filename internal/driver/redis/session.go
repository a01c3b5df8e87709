package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// session is one worker's handle on a table. Its reads, scans and
// single-record writes go through a connection it keeps (ownConn), which
// skips the pool's checkout and the per-command context goroutine of
// redigo's DoContext; load batches take connections from the DB's pool,
// which Options.Sessions sized so that every session finds one, and which
// ends a transaction left open (UNWATCH, DISCARD) when the connection goes
// back. It is not safe for concurrent use.
type session struct {
	db     *DB
	own    *ownConn
	closed bool
	k      keys
	fields []string // the table's field names, FIELD0…

	// Scratch reused by every call; cleared after each so that nothing of
	// the caller's is kept.
	names     []string
	args      []any
	evalArgs  []any
	recordKey []byte // the record's Redis key, built in a buffer kept
	scanKey   []byte
	scanVals  [][]byte

	// fieldArgs are the field names, and indexArg the index key, made
	// interface values once rather than on every call.
	fieldArgs []any
	indexArg  any

	// beforeExec, when set (tests only), runs between the WATCHed checks of
	// a plain InsertBatch and its EXEC.
	beforeExec func()
}

func newSession(db *DB, k keys, t driver.Table) *session {
	s := &session{db: db, own: newOwnConn(db), k: k, fields: t.Fields, scanVals: make([][]byte, len(t.Fields)), indexArg: k.index}
	for _, f := range t.Fields {
		s.fieldArgs = append(s.fieldArgs, f)
	}
	return s
}

// setRecordKey builds the record key of a YCSB key in s.recordKey.
func (s *session) setRecordKey(key []byte) {
	s.recordKey = s.k.appendRecord(s.recordKey[:0], key)
}

// fieldValueArgs appends to s.args the name and value of each field
// written: the listed field indexes (nil: all) with their values.
func (s *session) fieldValueArgs(fields []int, n int, values [][]byte) {
	for i := range n {
		f := i
		if fields != nil {
			f = fields[i]
		}
		s.args = append(s.args, s.fieldArgs[f], values[i])
	}
}

// fieldNames returns the names of the listed field indexes (nil: all).
func (s *session) fieldNames(fields []int) ([]string, error) {
	if fields == nil {
		return s.fields, nil
	}
	s.names = s.names[:0]
	for _, f := range fields {
		if f < 0 || f >= len(s.fields) {
			return nil, fmt.Errorf("redis: field index %d out of range [0,%d)", f, len(s.fields))
		}
		s.names = append(s.names, s.fields[f])
	}
	return s.names, nil
}

// Read fetches the listed fields (nil: all) of one record into values with
// one HMGET.
func (s *session) Read(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	names, err := s.fieldNames(fields)
	if err != nil {
		return err
	}
	if len(values) < len(names) {
		return fmt.Errorf("redis: read of %d fields into %d values", len(names), len(values))
	}
	if err := s.own.begin(ctx); err != nil {
		return err
	}
	s.setRecordKey(key)
	s.args = append(s.args[:0], s.recordKey)
	s.args = s.appendFieldArgs(s.args, fields)
	reply, err := s.own.conn.Do("HMGET", s.args...)
	err = s.own.end(ctx, err)
	clear(s.args)
	if err != nil {
		return classify(err)
	}
	got, err := redis.Values(reply, nil)
	if err != nil {
		return fmt.Errorf("redis: HMGET: %w", err)
	}
	return fill(values, got, names, key)
}

// appendFieldArgs appends the names of the listed fields (nil: all).
func (s *session) appendFieldArgs(args []any, fields []int) []any {
	if fields == nil {
		return append(args, s.fieldArgs...)
	}
	for _, f := range fields {
		args = append(args, s.fieldArgs[f])
	}
	return args
}

// fill copies an HMGET reply into values. A record with none of the fields
// does not exist; one with some of them missing was not written by dbprobe.
func fill(values [][]byte, got []any, names []string, key []byte) error {
	missing := -1
	for i, v := range got {
		b, ok := v.([]byte)
		if !ok {
			values[i] = values[i][:0]
			if missing < 0 {
				missing = i
			}
			continue
		}
		values[i] = append(values[i][:0], b...)
	}
	switch {
	case missing < 0:
		return nil
	case len(got) > 0 && allNil(got):
		return driver.ErrNotFound
	}
	return fmt.Errorf("redis: record %q has no field %s", key, names[missing])
}

func allNil(vs []any) bool {
	for _, v := range vs {
		if v != nil {
			return false
		}
	}
	return true
}

// Scan reads up to count records from startKey on, in byte order: the keys
// from the index with ZRANGEBYLEX, then the records with HMGETs in one
// pipeline. A record deleted between the two steps is skipped.
func (s *session) Scan(ctx context.Context, startKey []byte, count int, fields []int, visit func(key []byte, values [][]byte)) (int, error) {
	if count <= 0 {
		return 0, nil
	}
	names, err := s.fieldNames(fields)
	if err != nil {
		return 0, err
	}
	if err := s.own.begin(ctx); err != nil {
		return 0, err
	}
	members, replies, err := s.scan(startKey, count, fields)
	if err = s.own.end(ctx, err); err != nil {
		return 0, classify(err)
	}
	if len(s.scanVals) < len(names) {
		s.scanVals = make([][]byte, len(names))
	}
	vals := s.scanVals[:len(names)]
	read := 0
	for i, m := range members {
		got, err := redis.Values(replies[i], nil)
		if err != nil {
			return read, fmt.Errorf("redis: HMGET: %w", err)
		}
		s.scanKey = append(s.scanKey[:0], m...)
		err = fill(vals, got, names, s.scanKey)
		if errors.Is(err, driver.ErrNotFound) {
			continue
		}
		if err != nil {
			return read, err
		}
		if visit != nil {
			visit(s.scanKey, vals)
		}
		read++
	}
	return read, nil
}

// scan runs Scan's two round trips on the session's connection: the index
// members from startKey on, then the replies of their HMGETs.
func (s *session) scan(startKey []byte, count int, fields []int) ([][]byte, []any, error) {
	members, err := redis.ByteSlices(s.own.conn.Do("ZRANGEBYLEX", s.indexArg, lexFrom(startKey), "+", "LIMIT", 0, count))
	if err != nil || len(members) == 0 {
		return nil, nil, err
	}
	for _, m := range members {
		args := append(make([]any, 0, 1+len(s.fieldArgs)), s.k.prefix+string(m))
		if err := s.own.conn.Send("HMGET", s.appendFieldArgs(args, fields)...); err != nil {
			return nil, nil, err
		}
	}
	// An empty command flushes what was sent and reads every reply.
	replies, err := redis.Values(s.own.conn.Do(""))
	if err != nil {
		return nil, nil, err
	}
	for _, r := range replies {
		if e, ok := r.(redis.Error); ok {
			return nil, nil, e
		}
	}
	return members, replies, nil
}

// Update sets the listed fields (nil: all) of one record, with one script
// that checks the record is the table's first.
func (s *session) Update(ctx context.Context, key []byte, fields []int, values [][]byte) error {
	names, err := s.fieldNames(fields)
	if err != nil {
		return err
	}
	if len(values) < len(names) {
		return fmt.Errorf("redis: update of %d fields with %d values", len(names), len(values))
	}
	s.args = append(s.args[:0], key)
	s.fieldValueArgs(fields, len(names), values)
	return s.runOne(ctx, updateScript, key)
}

// Insert adds one record with every field, with one script that fails with
// the code EXISTS when the key exists.
func (s *session) Insert(ctx context.Context, key []byte, values [][]byte) error {
	if len(values) != len(s.fields) {
		return fmt.Errorf("redis: insert of %d values into %d fields", len(values), len(s.fields))
	}
	s.args = append(s.args[:0], key)
	s.fieldValueArgs(nil, len(s.fields), values)
	return s.runOne(ctx, insertScript, key)
}

// Delete removes one record and its index entry, with one script.
func (s *session) Delete(ctx context.Context, key []byte) error {
	s.args = append(s.args[:0], key)
	return s.runOne(ctx, deleteScript, key)
}

// scriptSHA holds the single-record scripts' SHA1s as interface values,
// made once rather than on every operation.
var scriptSHA = map[*redis.Script]any{
	insertScript: insertScript.Hash(),
	updateScript: updateScript.Hash(),
	deleteScript: deleteScript.Hash(),
}

// runOne runs a single-record script on the record's key and the index,
// with s.args after them: by its SHA1 (EVALSHA) with arguments the
// session reuses, and through Script.Do, which sends its text, when the
// server does not have it. A reply of 0 means the table has no such
// record.
func (s *session) runOne(ctx context.Context, script *redis.Script, key []byte) error {
	defer s.forgetArgs()
	if err := s.own.begin(ctx); err != nil {
		return err
	}
	s.setRecordKey(key)
	// The key count is the script's own (2): a small integer, boxed
	// without an allocation.
	s.evalArgs = append(append(s.evalArgs[:0], scriptSHA[script], 2, s.recordKey, s.indexArg), s.args...)
	reply, err := s.own.conn.Do("EVALSHA", s.evalArgs...)
	if code, _ := serverCode(err); code == codeNoScript {
		reply, err = script.Do(s.own.conn, s.evalArgs[2:]...)
	}
	n, err := redis.Int64(reply, s.own.end(ctx, err))
	switch {
	case errors.Is(err, redis.ErrNil):
		return driver.ErrNotFound
	case err != nil:
		if code, _ := serverCode(err); code == codeExists {
			err = fmt.Errorf("redis: key %q of table %s already exists: %w", key, s.k.table, err)
		}
		return classify(err)
	case n == 0:
		return driver.ErrNotFound
	}
	return nil
}

// forgetArgs clears what the arguments of the last command held of the
// caller's.
func (s *session) forgetArgs() {
	clear(s.args)
	clear(s.evalArgs)
}

// InsertBatch adds records all or none: with Options.BulkLoad in one
// script, else in one WATCH/MULTI/EXEC transaction of plain commands. A key
// that exists, or that appears twice in the batch, fails the whole batch
// with the code EXISTS.
func (s *session) InsertBatch(ctx context.Context, keys [][]byte, values [][][]byte) error {
	if err := driver.CheckBatch("redis", keys, values, len(s.fields)); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	seen := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		if _, dup := seen[string(k)]; dup {
			return driver.Classify(fmt.Errorf("redis: key %q appears twice in the batch", k), codeExists, driver.ClassOther)
		}
		seen[string(k)] = struct{}{}
	}
	records := make([]any, len(keys))
	for i, k := range keys {
		records[i] = s.k.record(k)
	}
	if s.db.opts.BulkLoad {
		return s.scriptBatch(ctx, keys, values, records)
	}
	return s.watchBatch(ctx, keys, values, records)
}

// scriptBatch loads the batch with one run of batchScript.
func (s *session) scriptBatch(ctx context.Context, keys [][]byte, values [][][]byte, records []any) error {
	n := len(s.fields)
	args := make([]any, 0, 3+len(records)+n+len(keys)*(1+n))
	args = append(append(args, 1+len(records), s.k.index), records...)
	args = append(args, n)
	args = append(args, s.fieldArgs...)
	for i, k := range keys {
		args = append(args, k)
		for _, v := range values[i] {
			args = append(args, v)
		}
	}
	if _, err := s.db.script(ctx, batchScript, args...); err != nil {
		return classify(s.nameDuplicate(err, keys))
	}
	return nil
}

// nameDuplicate adds the key to batchScript's EXISTS error, which gives the
// key's batch position: "EXISTS record 3 of the batch already exists".
func (s *session) nameDuplicate(err error, keys [][]byte) error {
	code, _ := serverCode(err)
	if code != codeExists {
		return err
	}
	f := strings.Fields(err.Error())
	if len(f) > 2 {
		if p, perr := strconv.Atoi(f[2]); perr == nil && p >= 1 && p <= len(keys) {
			return fmt.Errorf("redis: key %q of table %s already exists: %w", keys[p-1], s.k.table, err)
		}
	}
	return fmt.Errorf("redis: a key of the batch already exists in table %s: %w", s.k.table, err)
}

// watchBatch loads the batch with Redis's optimistic transaction: WATCH
// the records' keys, check that no key exists and that the index is a
// sorted set, then MULTI, HSET and ZADD per record, EXEC. When another
// client writes a watched key in between, EXEC runs nothing and the batch
// fails as a conflict the runner may retry. The checks make EXEC's
// commands unable to fail, so it writes all or, aborted, none. The index
// is not watched: every batch adds to it, so watching it would make
// concurrent loaders abort each other (measured: 7 of 10 batches with 4
// threads), and only dbprobe's own ZADDs, which cannot change its type,
// write it.
func (s *session) watchBatch(ctx context.Context, keys [][]byte, values [][][]byte, records []any) error {
	c, err := s.db.get(ctx)
	if err != nil {
		return classify(err)
	}
	// Closing the connection sends UNWATCH, or DISCARD, when the batch
	// ends before EXEC.
	defer c.Close()
	return classify(s.transaction(ctx, c, keys, values, records))
}

// transaction is watchBatch's WATCH, checks, MULTI … EXEC on c.
func (s *session) transaction(ctx context.Context, c redis.Conn, keys [][]byte, values [][][]byte, records []any) error {
	if _, err := redis.DoContext(c, ctx, "WATCH", records...); err != nil {
		return err
	}
	replies, err := pipeline(ctx, c, append([]any{"EXISTS"}, records...), []any{"TYPE", s.indexArg})
	if err != nil {
		return err
	}
	exists, err := redis.Int64(replies[0], nil)
	if err != nil {
		return fmt.Errorf("redis: EXISTS: %w", err)
	}
	if exists > 0 {
		return s.existingKey(ctx, c, keys, records)
	}
	if t, _ := redis.String(replies[1], nil); t != "none" && t != "zset" {
		return fmt.Errorf("redis: key %s of table %s is a %s, not the sorted set dbprobe indexes the table with", s.k.index, s.k.table, t)
	}
	if s.beforeExec != nil {
		s.beforeExec()
	}
	n := len(s.fields)
	if err := c.Send("MULTI"); err != nil {
		return err
	}
	hset := make([]any, 1+2*n)
	zadd := make([]any, 1, 1+2*len(keys))
	zadd[0] = s.indexArg
	for i, k := range keys {
		hset[0] = records[i]
		for f := range n {
			hset[1+2*f], hset[2+2*f] = s.fieldArgs[f], values[i][f]
		}
		// Send writes the command into the connection's buffer at once,
		// so hset can be reused.
		if err := c.Send("HSET", hset...); err != nil {
			return err
		}
		zadd = append(zadd, 0, k)
	}
	if err := c.Send("ZADD", zadd...); err != nil {
		return err
	}
	// EXEC's reply is nil when a WATCHed key changed, and an error when a
	// queued command was refused; the first error reply among the queued
	// commands' is the error.
	reply, err := redis.DoContext(c, ctx, "EXEC")
	switch {
	case err != nil:
		return err
	case reply == nil:
		return errWatchAborted
	}
	return errorReply(reply)
}

// existingKey names the first key of the batch that exists, for the
// duplicate error of a plain batch.
func (s *session) existingKey(ctx context.Context, c redis.Conn, keys [][]byte, records []any) error {
	cmds := make([][]any, len(records))
	for i, r := range records {
		cmds[i] = []any{"EXISTS", r}
	}
	replies, err := pipeline(ctx, c, cmds...)
	if err != nil {
		return err
	}
	for i, r := range replies {
		if n, _ := redis.Int64(r, nil); n > 0 {
			return driver.Classify(fmt.Errorf("redis: key %q of table %s already exists", keys[i], s.k.table), codeExists, driver.ClassOther)
		}
	}
	// Deleted since the first check: a conflict like any other change.
	return errWatchAborted
}

// Close gives the session's connection back to the pool. Closing twice
// is harmless.
func (s *session) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.own.close()
}

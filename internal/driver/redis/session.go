package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/dbprobe/dbprobe/internal/driver"
)

// session is one worker's handle on a table. Its reads and single-record
// writes go through a connection it keeps (ownConn), which skips the
// pool's checkout and health check and the socket deadlines on every
// operation; scans and batches take connections from the DB's pool, which
// Options.Sessions sized so that every session finds one. It is not safe
// for concurrent use.
type session struct {
	db     *DB
	client *redis.Client
	own    *ownConn
	closed bool
	k      keys
	fields []string // the table's field names, FIELD0…

	// Scratch reused by every call; cleared after each so that nothing of
	// the caller's is kept.
	names    []string
	args     []any
	scanKey  []byte
	scanVals [][]byte

	// The arguments of reads and single-record writes. A string or a byte
	// slice put in an interface is copied to the heap on every call; the
	// field names and the index key are made interface values once, and
	// keys and values go in through pointers (bytesArg).
	fieldArgs []any
	indexArg  any
	recordKey bytesArg   // the record's Redis key, built in a buffer kept
	ycsbKey   bytesArg   // the caller's key
	values    []bytesArg // the caller's values
	evalArgs  []any
	// readAll is HMGET of every field.
	readAll []any

	// beforeExec, when set (tests only), runs between the WATCHed checks of
	// a plain InsertBatch and its EXEC.
	beforeExec func()
}

func newSession(db *DB, k keys, t driver.Table) *session {
	s := &session{db: db, client: db.client, own: newOwnConn(db), k: k, fields: t.Fields, scanVals: make([][]byte, len(t.Fields)),
		indexArg: k.index, values: make([]bytesArg, len(t.Fields))}
	for _, f := range t.Fields {
		s.fieldArgs = append(s.fieldArgs, f)
	}
	s.readAll = append([]any{"hmget", &s.recordKey}, s.fieldArgs...)
	return s
}

// bytesArg hands a byte slice to go-redis as a command argument through a
// pointer, which an interface holds without allocating.
type bytesArg struct{ b []byte }

// MarshalBinary gives go-redis the bytes to send.
func (a *bytesArg) MarshalBinary() ([]byte, error) { return a.b, nil }

// setRecordKey builds the record key of a YCSB key in s.recordKey.
func (s *session) setRecordKey(key []byte) {
	s.recordKey.b = s.k.appendRecord(s.recordKey.b[:0], key)
}

// fieldValueArgs appends to s.args the name and value of each field
// written: the listed field indexes (nil: all) with their values.
func (s *session) fieldValueArgs(fields []int, n int, values [][]byte) {
	if len(s.values) < n {
		s.values = make([]bytesArg, n)
	}
	for i := range n {
		f := i
		if fields != nil {
			f = fields[i]
		}
		s.values[i].b = values[i]
		s.args = append(s.args, s.fieldArgs[f], &s.values[i])
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
	cmd := redis.NewSliceCmd(ctx, s.readArgs(fields)...)
	err = s.own.end(ctx, s.own.conn.Process(ctx, cmd))
	clear(s.args)
	if err != nil {
		return classify(err)
	}
	return fill(values, cmd.Val(), names, key)
}

// readArgs returns the arguments of an HMGET of the listed fields (nil:
// all) of the record in s.recordKey.
func (s *session) readArgs(fields []int) []any {
	if fields == nil {
		return s.readAll
	}
	s.args = append(s.args[:0], "hmget", &s.recordKey)
	for _, f := range fields {
		s.args = append(s.args, s.fieldArgs[f])
	}
	return s.args
}

// fill copies an HMGET reply into values. A record with none of the fields
// does not exist; one with some of them missing was not written by dbprobe.
func fill(values [][]byte, got []any, names []string, key []byte) error {
	missing := -1
	for i, v := range got {
		str, ok := v.(string)
		if !ok {
			values[i] = values[i][:0]
			if missing < 0 {
				missing = i
			}
			continue
		}
		values[i] = append(values[i][:0], str...)
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
	members, err := s.client.ZRangeByLex(ctx, s.k.index, &redis.ZRangeBy{Min: lexFrom(startKey), Max: "+", Count: int64(count)}).Result()
	if err != nil {
		return 0, classify(err)
	}
	if len(members) == 0 {
		return 0, nil
	}
	cmds := make([]*redis.SliceCmd, len(members))
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, m := range members {
			cmds[i] = p.HMGet(ctx, s.k.prefix+m, names...)
		}
		return nil
	})
	if err != nil {
		return 0, classify(err)
	}
	if len(s.scanVals) < len(names) {
		s.scanVals = make([][]byte, len(names))
	}
	vals := s.scanVals[:len(names)]
	read := 0
	for i, m := range members {
		s.scanKey = append(s.scanKey[:0], m...)
		err := fill(vals, cmds[i].Val(), names, s.scanKey)
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
	s.args = append(s.args[:0], &s.ycsbKey)
	s.fieldValueArgs(fields, len(names), values)
	return s.runOne(ctx, updateScript, key)
}

// Insert adds one record with every field, with one script that fails with
// the code EXISTS when the key exists.
func (s *session) Insert(ctx context.Context, key []byte, values [][]byte) error {
	if len(values) != len(s.fields) {
		return fmt.Errorf("redis: insert of %d values into %d fields", len(values), len(s.fields))
	}
	s.args = append(s.args[:0], &s.ycsbKey)
	s.fieldValueArgs(nil, len(s.fields), values)
	return s.runOne(ctx, insertScript, key)
}

// Delete removes one record and its index entry, with one script.
func (s *session) Delete(ctx context.Context, key []byte) error {
	s.args = append(s.args[:0], &s.ycsbKey)
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
// with s.args after them, by its SHA1 (EVALSHA, as Script.Run does), and
// by its text when the server does not have it; a reply of 0 means the
// table has no such record.
func (s *session) runOne(ctx context.Context, script *redis.Script, key []byte) error {
	s.ycsbKey.b = key
	defer s.forgetArgs()
	if err := s.own.begin(ctx); err != nil {
		return err
	}
	s.setRecordKey(key)
	s.evalArgs = append(append(s.evalArgs[:0], "evalsha", scriptSHA[script], 2, &s.recordKey, s.indexArg), s.args...)
	cmd := redis.NewCmd(ctx, s.evalArgs...)
	if err := s.own.conn.Process(ctx, cmd); err != nil {
		if code, _ := serverCode(err); code == codeNoScript {
			cmd = script.Eval(ctx, s.own.conn, []string{string(s.recordKey.b), s.k.index}, s.args...)
		}
	}
	n, err := cmd.Int64()
	err = s.own.end(ctx, err)
	switch {
	case err != nil && errors.Is(err, redis.Nil):
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
	clear(s.values)
	s.ycsbKey.b = nil
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
	records := make([]string, len(keys))
	for i, k := range keys {
		records[i] = s.k.record(k)
	}
	if s.db.opts.BulkLoad {
		return s.scriptBatch(ctx, keys, values, records)
	}
	return s.watchBatch(ctx, keys, values, records)
}

// scriptBatch loads the batch with one run of batchScript.
func (s *session) scriptBatch(ctx context.Context, keys [][]byte, values [][][]byte, records []string) error {
	n := len(s.fields)
	redisKeys := make([]string, 0, 1+len(records))
	redisKeys = append(append(redisKeys, s.k.index), records...)
	args := make([]any, 0, 1+n+len(keys)*(1+n))
	args = append(args, n)
	for _, f := range s.fields {
		args = append(args, f)
	}
	for i, k := range keys {
		args = append(args, k)
		for _, v := range values[i] {
			args = append(args, v)
		}
	}
	_, err := batchScript.Run(ctx, s.client, redisKeys, args...).Result()
	if err != nil {
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
func (s *session) watchBatch(ctx context.Context, keys [][]byte, values [][][]byte, records []string) error {
	err := s.client.Watch(ctx, func(tx *redis.Tx) error {
		var exists *redis.IntCmd
		var indexType *redis.StatusCmd
		if _, err := tx.Pipelined(ctx, func(p redis.Pipeliner) error {
			exists = p.Exists(ctx, records...)
			indexType = p.Type(ctx, s.k.index)
			return nil
		}); err != nil {
			return err
		}
		if exists.Val() > 0 {
			return s.existingKey(ctx, tx, keys, records)
		}
		if t := indexType.Val(); t != "none" && t != "zset" {
			return fmt.Errorf("redis: key %s of table %s is a %s, not the sorted set dbprobe indexes the table with", s.k.index, s.k.table, t)
		}
		if s.beforeExec != nil {
			s.beforeExec()
		}
		n := len(s.fields)
		pairs := make([]any, 2*n)
		members := make([]redis.Z, len(keys))
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range keys {
				for f, name := range s.fields {
					pairs[2*f], pairs[2*f+1] = name, values[i][f]
				}
				// HSet copies its arguments into the command it queues.
				p.HSet(ctx, records[i], pairs...)
				members[i] = redis.Z{Member: string(k)}
			}
			p.ZAdd(ctx, s.k.index, members...)
			return nil
		})
		return err
	}, records...)
	return classify(err)
}

// existingKey names the first key of the batch that exists, for the
// duplicate error of a plain batch.
func (s *session) existingKey(ctx context.Context, tx *redis.Tx, keys [][]byte, records []string) error {
	cmds := make([]*redis.IntCmd, len(records))
	if _, err := tx.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range records {
			cmds[i] = p.Exists(ctx, r)
		}
		return nil
	}); err != nil {
		return err
	}
	for i, c := range cmds {
		if c.Val() > 0 {
			return driver.Classify(fmt.Errorf("redis: key %q of table %s already exists", keys[i], s.k.table), codeExists, driver.ClassOther)
		}
	}
	// Deleted since the first check: a conflict like any other change.
	return redis.TxFailedErr
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

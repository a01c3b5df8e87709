package redis

import "github.com/gomodule/redigo/redis"

// The Lua scripts behind each write. A script runs on the server as one
// atomic step, so a check and the writes that depend on it cannot be split
// by another client, and each operation costs one round trip. They are
// sent with EVALSHA, and with EVAL (which caches them again) when the
// server has not seen them, as redigo's Script.Do does.
//
// Every key a script touches is passed in KEYS, as Redis asks of scripts.
// A record belongs to the table when its YCSB key is in the index: update
// and delete check that, so that they never touch a key with the table's
// prefix that dbprobe did not write. Redis does not roll a script back when
// a command in it fails, so each script writes the index first: if the
// index key has the wrong type, that first write fails and nothing is
// written. The error replies start with a code of their own (EXISTS), which
// clients see as the first word of the error.
var (
	// insertScript adds one record unless its key exists.
	// KEYS: record, index. ARGV: YCSB key, then field/value pairs.
	insertScript = redis.NewScript(2, `
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.error_reply('EXISTS the record already exists')
end
redis.call('ZADD', KEYS[2], 0, ARGV[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
`)

	// updateScript sets fields of one record; 0 when the table has no such
	// record, so that an update never creates one.
	// KEYS: record, index. ARGV: YCSB key, then field/value pairs.
	updateScript = redis.NewScript(2, `
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) or redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
`)

	// deleteScript removes one record and its index entry; 0 when the
	// table has no such record.
	// KEYS: record, index. ARGV: YCSB key.
	deleteScript = redis.NewScript(2, `
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
  return 0
end
redis.call('DEL', KEYS[1])
return 1
`)

	// batchScript adds a batch of records, all or none: it checks every key
	// before writing any. The error names the batch position (from 1) of
	// the first key that exists.
	// KEYS: index, then the records' keys, their number given first in
	// each call. ARGV: the number of fields n, the n field names, then
	// per record its YCSB key and n values.
	batchScript = redis.NewScript(-1, `
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    return redis.error_reply('EXISTS record ' .. (i - 1) .. ' of the batch already exists')
  end
end
local n = tonumber(ARGV[1])
local hset = {}
local at = n + 2
for i = 2, #KEYS do
  for f = 1, n do
    hset[2 * f - 1] = ARGV[1 + f]
    hset[2 * f] = ARGV[at + f]
  end
  redis.call('ZADD', KEYS[1], 0, ARGV[at])
  redis.call('HSET', KEYS[i], unpack(hset))
  at = at + n + 1
end
return #KEYS - 1
`)

	// createScript creates a table's schema and records that dbprobe owns
	// it, unless its schema or index exists already; 0 then.
	// KEYS: schema, index, ownership set. ARGV: table name, then the
	// schema's field/value pairs.
	createScript = redis.NewScript(3, `
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
`)
)

// Package shard spreads one key-value table over several databases by
// contiguous ranges of record numbers (--shard URL, repeated, or
// URL@FIRST-LAST). YCSB keys are FNV hashes of record numbers, so a range
// of record numbers is not a range of key strings: the router needs the
// record number, which no driver.Session call carries. The workload knows
// it (workload.Op.KeyNum, the loader's batch start), so the experiment's
// worker tells the session before each call through the optional Router
// interface; nothing above this package learns how many databases there
// are or which ones.
//
// DB implements driver.DB over the shards' own DBs and Session
// driver.Session over one session per shard: reads, updates, inserts and
// deletes go to the shard holding the record; a load batch is split where
// it crosses a boundary; a scan — YCSB's next N keys in key order from a
// start key — asks every shard for its next N keys and merges them in key
// order, which is exactly what one database holding every record would
// return. Each shard's calls are counted and timed for per-shard results
// (DB.TakeStats).
//
// Plan validates the ranges before any database is opened, so a bad shard
// list changes nothing anywhere.
package shard

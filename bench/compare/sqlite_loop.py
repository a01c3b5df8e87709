"""The foundation issue's SQLite reference: one Python thread issuing the
statements of YCSB workload A to the sqlite3 module, timed beside dbprobe
by bench/compare (sqlite.go) on the same database file.

    python3 sqlite_loop.py DB OPS RECORDS autocommit|transaction SEED

autocommit commits every UPDATE on its own, as dbprobe acknowledges a write
only after its commit; transaction is the sqlite3 module's default, which
opens a transaction before the first UPDATE and, with no commit() in the
loop, keeps it open to the end, so nothing is committed until then.

The keys are YCSB's for workload A: a scrambled zipfian draw (theta 0.99
over YCSB's fixed item space, folded onto the records with FNV-1a 64) named
by insertorder=hashed, so the same rows are hot as in dbprobe's run. The
keys, operations and values are drawn before the clock starts. Every read
must find its row, or the keys do not match the loaded table and the run
fails. Prints one line: ops_per_sec=… cpu_us_per_op=… sqlite=VERSION.
"""

import random
import sqlite3
import sys
import time

MASK64 = (1 << 64) - 1
FIELDS = 10
VALUE_LENGTH = 100

# YCSB's ScrambledZipfianGenerator: ZipfianGenerator(0, ITEM_COUNT, 0.99,
# ZETAN) over ITEM_COUNT + 1 items, with zeta precomputed by YCSB.
ITEMS = 10_000_000_001
THETA = 0.99
ZETAN = 26.46902820178302
ALPHA = 1 / (1 - THETA)
ZETA2 = 1 + 0.5**THETA
ETA = (1 - (2 / ITEMS) ** (1 - THETA)) / (1 - ZETA2 / ZETAN)


def fnv_hash64(v):
    """YCSB's Utils.fnvhash64: FNV-1a over the 8 bytes, lowest first, then
    the absolute value of the result read as a signed number."""
    h = 0xCBF29CE484222325
    for _ in range(8):
        h ^= v & 0xFF
        h = (h * 1099511628211) & MASK64
        v >>= 8
    if h >= 1 << 63:
        h -= 1 << 64
    return min(abs(h), (1 << 63) - 1)


def zipfian(u):
    uz = u * ZETAN
    if uz < 1:
        return 0
    if uz < ZETA2:
        return 1
    return int(ITEMS * (ETA * u - ETA + 1) ** ALPHA)


def main():
    path, ops, records, mode, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    if mode not in ("autocommit", "transaction"):
        sys.exit("mode must be autocommit or transaction, not " + mode)
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    values = ["".join(rng.choice(letters) for _ in range(VALUE_LENGTH)) for _ in range(1024)]
    plan = []
    for _ in range(ops):
        key = "user%d" % fnv_hash64(fnv_hash64(zipfian(rng.random())) % records)
        if rng.random() < 0.5:
            plan.append((key, -1, None))
        else:
            plan.append((key, rng.randrange(FIELDS), values[rng.randrange(len(values))]))

    con = sqlite3.connect(path, isolation_level=None if mode == "autocommit" else "")
    con.execute("PRAGMA synchronous = NORMAL")
    if con.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        sys.exit(path + " is not in WAL mode")
    columns = ", ".join('"FIELD%d"' % f for f in range(FIELDS))
    read = 'SELECT %s FROM "usertable" WHERE "YCSB_KEY" = ?' % columns
    updates = ['UPDATE "usertable" SET "FIELD%d" = ? WHERE "YCSB_KEY" = ?' % f for f in range(FIELDS)]
    execute = con.execute

    missing = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for key, field, value in plan:
        if field < 0:
            if execute(read, (key,)).fetchone() is None:
                missing += 1
        else:
            execute(updates[field], (value, key))
    con.commit()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    con.close()
    if missing:
        sys.exit("%d reads found no row: the keys do not match the loaded table" % missing)
    print("ops_per_sec=%.1f cpu_us_per_op=%.2f sqlite=%s" % (ops / wall, 1e6 * cpu / ops, sqlite3.sqlite_version))


if __name__ == "__main__":
    main()

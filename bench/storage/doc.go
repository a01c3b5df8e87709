// Command storage measures `dbprobe storage` against the limits of this
// machine's disk and against the stock tools, for bench/RESULTS.md, and
// runs the studies of docs/experiments/storage-limits.md.
//
//	go run ./bench/storage                       # every part; needs root
//	go run ./bench/storage --only disk,scan --reps 5
//
// Parts:
//
//   - disk: the disk's own limits, measured by tools made for it on the
//     file system the throwaway servers use (--dir, /tmp): fio sequential
//     reads and writes with O_DIRECT (and PostgreSQL's access pattern,
//     8 kB buffered reads), and fsyncs per second with pg_test_fsync.
//     fio comes from Debian's package (apt-get install -y fio).
//   - scan, bulk, read (PostgreSQL) and mybulk (MariaDB): dbprobe beside
//     psql's SELECT count(*), psql's \copy and the mariadb client's LOAD
//     DATA LOCAL INFILE on the same tables or the same rows, in pairs that
//     take turns going first, with medians of the ratios; client CPU per
//     GB and peak RSS from each process's rusage.
//   - rss: dbprobe read and bulk at 16 threads, for their peak RSS.
//   - cache: dbprobe storage cache on PostgreSQL with --cache-max (4GB)
//     and shared_buffers --cache-pg (1GB), timed to its estimate; then at
//     shared_buffers 128MB and 512MB and innodb_buffer_pool_size 128M and
//     512M with the default --max-size, each estimate beside its setting.
//   - study: every storage experiment on PostgreSQL, MariaDB and SQLite,
//     then the table copy again with the log's device capped (cgroup v1
//     blkio throttling of a loop-mounted file system holding the log).
//
// The servers are throwaway ones of internal/instance, started here so
// that their settings are known: PostgreSQL with 16 MB of shared_buffers
// (a cold table stays cold: the database's cache holds under 1% of it),
// MariaDB with a 256 MB buffer pool, both with their data under --dir.
// Making a table cold (fdatasync and posix_fadvise DONTNEED on its files)
// and the blkio groups need root.
package main

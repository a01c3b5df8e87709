package cli

import (
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/storage"
)

// storageOptions are the flags of the dbprobe storage subcommands; each
// subcommand takes those that apply to it.
type storageOptions struct {
	sharedOptions
	size        string
	duration    time.Duration
	chunk       string
	threads     string
	dop         string
	batch       int
	payload     int
	noCopy      bool
	keep        bool
	expect      string
	price       string
	restartCmd  string
	warm        bool
	requireCold bool
	maxSize     string
	settleLimit time.Duration
}

// storageCommon is what dbprobe storage --help says of every experiment;
// each subcommand's help points to it rather than repeating it.
const storageCommon = `

Each experiment works on tables of its own, named dbprobe_storage_<kind>,
made and filled on the server (no row crosses the network) and dropped at
the end unless --keep: also after Ctrl-C, which stops the statement in
flight on the server; after a kill -9, the next dbprobe storage run of any
experiment finds and drops every dbprobe_storage_* table dbprobe made, and
says so. A table kept with --keep is used again by the next run of its
experiment when it holds the rows and payload that run would fill (said
so), and refilled otherwise (saying why). A table of the experiment's
names that dbprobe did not create is refused and left alone.

--duration (default 60s) is how long the experiment repeats its pass, so
that per-second and per-minute figures exist; 0 is refused (exit 2).
Sizes and rates are decimal: 1 GB = 10^9 bytes. The summary gives the rate, the per-second series'
spread (median, min, max, coefficient of variation, share of seconds below
90% of the median, and which seconds fell), the database's own counters
and the device's behind it, and a verdict. --expect KEY=RATE holds a rate
against a promise (measured ÷ promised; it reports, and exits 0); --price
AMOUNT/hour or AMOUNT/month gives the run's cost and the cost per GB.

Without --db a new SQLite database in a temporary directory is used and
removed at exit. Redis and --db null run no storage experiment.`

// storagePointer ends each subcommand's help: the tables, --duration, the
// summary and the default database are said once, by dbprobe storage
// --help.
const storagePointer = `

dbprobe storage --help says what every experiment shares: its tables
(made, kept, reused, dropped, leftovers), --duration, the summary and its
verdict, --expect and --price, and the SQLite database used without --db.`

func newStorageCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "storage",
		Short: "Storage rates: cold scan, read into the client, write, bulk load, log",
		Long: `storage measures the rates a database's storage delivers, each proven by
the database's own counters and the host's disk counters:

  scan     cold data read from storage into the database (GB/min), proven
           physical or reported "not physical"
  read     rows streamed into the client by N threads (GB/min, rows/s)
  write    large INSERT … SELECT chunks (MB/min of table, MB/s of log)
  bulk     the bulk API (COPY, LOAD DATA, bulk copy) with N writers
  logcopy  the transaction log's rate, copying a table on the server at
           DOP 1, 2, 4, 8: log-bound or CPU-bound
  cache    how much memory the database really keeps data in: working
           sets of growing size read by key at random, the database's own
           hit share at each, and where it falls below 95%` + storageCommon,
		Example: `  dbprobe storage scan --db postgres://bench@127.0.0.1:5432/bench --size 4GB --restart-cmd 'pg_ctlcluster 15 main restart'
  dbprobe storage logcopy --db postgres://bench@127.0.0.1:5432/bench --size 2GB --dop 1,2,4,8 --expect log=48MB/s
  dbprobe storage cache --db postgres://bench@127.0.0.1:5432/bench --max-size 4GB --expect cache=2GB`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	cmd.AddCommand(
		newStorageKind(storage.Scan, "Cold read rate: a table of --size read on the server, proven physical",
			`scan creates a table of --size (default: twice the database's own cache,
as the database reports it, 1GB at least) filled on the server, makes it
cold and reads it sequentially on the server (count(*) over whole chunks:
nothing crosses the network), pass after pass until --duration is up,
made cold again before each pass.

Cold means read from the device. Before each pass dbprobe evicts the
table's files from the OS page cache when the database is on this machine
(posix_fadvise DONTNEED on the files the database names, or drop_caches as
root). The database's own cache is emptied only by --restart-cmd, run once
between the fill and the first pass (e.g. 'pg_ctl restart -D …'); without
it, give a --size larger than that cache. For a database on another
machine dbprobe says what it could not do (--require-cold refuses instead).
The summary says exactly what was done.

The proof: the bytes the database says it read from outside its cache, and
the bytes the table's block device read (/proc/diskstats), beside the
table's size on disk. A scan whose bytes mostly came from a cache is
reported as not physical: its rate is the cache's, not the storage's.`,
			`  dbprobe storage scan
  dbprobe storage scan --db postgres://bench@127.0.0.1:5432/bench --size 4GB --duration 2m --expect scan=14GB/min --price 2.40/hour
  dbprobe storage scan --db mysql://bench@127.0.0.1:3306/bench --size 2GB --restart-cmd 'systemctl restart mariadb' --out scan.jsonl`),
		newStorageKind(storage.Read, "Read rate into the client with N threads, each streaming its own key ranges",
			`read creates a table of --size filled on the server and streams its rows
into the client with --threads N connections, each taking the next key
range not yet read (SELECT id, payload … WHERE id BETWEEN …), round and
round the table until --duration is up. A list (--threads 1,2,4,8) runs
each value in turn and reports the curve.

The rate's bytes are the payload received. For each thread count the
summary gives GB/min, rows/s, the client's CPU, and whether the client,
the network (or the round trips) or the server limited it, from the
monitor's samples.`,
			`  dbprobe storage read --threads 1,2,4,8
  dbprobe storage read --db postgres://bench@10.0.0.5:5432/bench --size 2GB --threads 1,2,4,8 --duration 30s --expect read=2GB/min`),
		newStorageKind(storage.Write, "Write rate by large INSERT … SELECT chunks, with the log written",
			`write fills a source table of one --chunk (default 100MB) of rows on the
server, reads it once so that it is in memory, and copies it into the
target table by INSERT … SELECT, one chunk per statement and transaction,
until --size is written or --duration is up.

The rate's bytes are the target table's size on disk at the end. The
summary adds the log bytes from the database's counters (MB/s of log, log
bytes per byte of table) and the device's written bytes per byte of table:
the write amplification. Where the database gives its checkpoint age
(MariaDB 10.5+, MySQL 8.0.30+), the summary adds its peak against the most
the log may hold: from 75% the verdict says the writes waited on the
database's checkpoints, a log too small rather than a device too slow
(bulk and logcopy report it too).`,
			`  dbprobe storage write --size 2GB --chunk 100MB
  dbprobe storage write --db postgres://bench@127.0.0.1:5432/bench --size 10GB --expect write=250MB/min,log=48MB/s`),
		newStorageKind(storage.Bulk, "Bulk load rate through the database's bulk API with N writers",
			`bulk loads rows of --size into a new table through each database's bulk
API (PostgreSQL COPY, MySQL LOAD DATA LOCAL INFILE, SQL Server bulk copy,
SQLite one transaction per batch) with --threads N writers, each its own
connection, in batches of --batch rows; --no-copy loads by multi-row
INSERT statements instead, for the comparison. A --threads list loads once
per value, into a new table each time.

The rate's bytes are the rows' ids and payload. Afterwards the rows are
counted in the table, and the summary says whether every acknowledged row
is there.`,
			`  dbprobe storage bulk --threads 4
  dbprobe storage bulk --db postgres://bench@127.0.0.1:5432/bench --size 2GB --threads 1,4,16 --expect bulk=50MB/s
  dbprobe storage bulk --db mysql://bench@127.0.0.1:3306/bench --size 1GB --threads 8 --no-copy`),
		newStorageKind(storage.LogCopy, "Transaction-log rate by a server-side table copy at DOP 1, 2, 4, 8",
			`logcopy fills a table of --size on the server and copies it on the server
(CREATE TABLE AS, SELECT INTO … OPTION (MAXDOP n), CREATE TABLE … SELECT)
at each --dop in turn, copy after copy for --duration (at least once), the
copy dropped between two. The degree is the database's parallel workers
plus the leader (PostgreSQL) or MAXDOP (SQL Server); a database that copies
serially runs once at DOP 1 and says so.

For each degree: the copy's elapsed time, the log's MB/s from the
database's own log counters, and the host's CPU; then the verdict the
question needs: "log-bound: 48 MB/s at DOP 2, 4 and 8; more cores do not
copy faster", or CPU-bound (a writer on one core: PostgreSQL parallelizes
only the SELECT of a CREATE TABLE AS), or serial-bound (a rate flat across
the degrees with neither the log nor a core shown as the wall), or "almost
no log" when the database skipped the log for the copy (PostgreSQL at
wal_level=minimal).`,
			`  dbprobe storage logcopy --size 500MB
  dbprobe storage logcopy --db postgres://bench@127.0.0.1:5432/bench --size 2GB --dop 1,2,4,8 --duration 2m --expect log=48MB/s`),
		newStorageKind(storage.Cache, "Cache size the database really gives: hit share and latency against working-set size",
			`cache fills a table of --max-size on the server and reads working sets of
growing size S, the first S bytes of it (its share of the table's size on
disk, index included): S doubles from about 8MB up to --max-size (read from
the largest down, so that each starts in a cache holding no hotter pages
than its own), then the interval around the knee is halved twice. Each working set is read once by
key ranges (so that it starts in the caches as far as they hold it), then
by --threads connections, one key at random per lookup, until its hit share
settles: 3 windows in a row of 1 s (5,000 pages or more each) after the
first, each within 1 point of their mean (or 3 standard errors, if the
share is noisier), or --settle-limit is up (said so).

For each S: the share of pages the database found in its own cache, from
its own counters (PostgreSQL pg_statio_all_tables, the table's own; InnoDB
Innodb_buffer_pool_read_requests and _reads, SQL Server's Buffer Manager
page lookups and reads, the server's), the lookups' p50 and p99, and, when
the database is on this machine, how much of what it missed the device
read (/proc/diskstats): the rest came from the OS page cache. PostgreSQL
reads through that page cache, so with a small shared_buffers its misses
are mostly memory, not storage: the verdict says which layer served them.

The estimate is the size where the hit share falls below 95%, as a
bracket ("cache ≈ 384–512 MB: 99% hits at 384 MB, 71% at 512 MB"), beside
the cache the database is configured with (shared_buffers,
innodb_buffer_pool_size, max server memory) and this machine's memory.
--expect cache=2GB holds a promised size against the bracket. SQLite
(whose counters its Go drivers do not expose), Redis and --db null are
refused (exit 2), as is a --max-size the data's file system has no room
for.`,
			`  dbprobe storage cache --db postgres://bench@127.0.0.1:5432/bench
  dbprobe storage cache --db mysql://bench@127.0.0.1:3306/bench --max-size 2GB --expect cache=1GB --out cache.jsonl`),
	)
	return cmd
}

// newStorageKind makes one storage subcommand with the flags that apply
// to it.
func newStorageKind(kind storage.Kind, short, long, example string) *cobra.Command {
	o := &storageOptions{}
	cmd := &cobra.Command{
		Use:     kind.String(),
		Short:   short,
		Long:    long + storagePointer,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runStorage(c, kind, o)
		},
	}
	addTargetFlags(cmd, &o.sharedOptions, "database URL: postgres://user@host:5432/db, mysql://user@host:3306/db, sqlserver://user@host:1433?database=db, sqlite:///path/file.db (env DBPROBE_DB; default: a new SQLite database in a temporary directory, removed at exit)")
	f := cmd.Flags()
	workload := []string{"size", "payload", "keep"}
	shape := []string{"duration"}
	knobs := []string{}
	if kind == storage.Cache {
		// Its sizes are the working sets', its time each one's settling.
		workload, shape = []string{"max-size", "payload", "keep"}, []string{"threads", "settle-limit"}
	}
	sizeHelp := "bytes of the table the experiment works on (scan, read, logcopy) or of the rows it writes (write, bulk), decimal units: 500MB, 2GB, 1.5GiB"
	if kind == storage.Scan {
		sizeHelp = "bytes of the table scanned, decimal units: 500MB, 2GB, 1.5GiB; without it, twice the database's own cache (shared_buffers, innodb_buffer_pool_size, …), 1GB at least"
	}
	if kind != storage.Cache {
		f.StringVar(&o.size, "size", "1GB", sizeHelp)
		f.DurationVar(&o.duration, "duration", storage.DefaultDuration, "how long the experiment repeats its pass (per --threads or --dop value where there is a list), so that per-second and per-minute figures exist; write and bulk stop sooner once --size is written")
	}
	f.IntVar(&o.payload, "payload", storage.DefaultPayload, "bytes of payload per row (1 to 8000), stored inline and uncompressed; each row also has an 8-byte id")
	f.BoolVar(&o.keep, "keep", false, "keep the experiment's tables at the end: the next run of the same experiment uses the one it fills again when it fits (rows and payload), and any storage run drops the rest")
	switch kind {
	case storage.Cache:
		f.StringVar(&o.maxSize, "max-size", "", "the largest working set read, decimal units: 512MB, 4GB; without it the smaller of 4GB and twice the database's cache (shared_buffers, innodb_buffer_pool_size, …), 256MB at least; the table filled is this size of rows")
		f.StringVar(&o.threads, "threads", strconv.Itoa(storage.DefaultCacheThreads), "connections reading each working set by key at random (one value)")
		f.DurationVar(&o.settleLimit, "settle-limit", storage.DefaultSettleLimit, "the longest one working set is read while its hit share has not settled; such a size is marked not settled")
	case storage.Scan:
		f.StringVar(&o.restartCmd, "restart-cmd", "", "a shell command that restarts the database, run once between the fill and the first pass to empty its own cache, e.g. 'pg_ctl restart -D /var/lib/postgresql/data -m fast'; one that fails stops the run (exit 1), saying what it printed last")
		f.BoolVar(&o.warm, "warm", false, "do not make the table cold: read it as the fill left it, from whatever caches hold it (the verdict then says whether that was physical)")
		f.BoolVar(&o.requireCold, "require-cold", false, "refuse, before anything is made, a scan dbprobe cannot make cold (a database on another machine; table files it cannot name, without root)")
		// How the table is made cold decides what is measured: workload.
		workload = append(workload, "restart-cmd", "warm", "require-cold")
	case storage.Read:
		f.StringVar(&o.threads, "threads", "1", "reader connections, or a list run in turn for the curve: 1,2,4,8")
		shape = append(shape, "threads")
	case storage.Write:
		f.StringVar(&o.chunk, "chunk", "100MB", "rows copied by one INSERT … SELECT, in bytes of rows (the source table's size); one larger than --size is clamped to it")
		workload = append(workload, "chunk")
	case storage.Bulk:
		f.StringVar(&o.threads, "threads", "1", "writers, each with its own connection, or a list loaded in turn: 1,4,16")
		f.IntVar(&o.batch, "batch", storage.DefaultBatch, "rows per batch, each one bulk call (one COPY, one LOAD DATA) and one transaction")
		f.BoolVar(&o.noCopy, "no-copy", false, "load by multi-row INSERT statements instead of the bulk API, for the comparison")
		shape = append(shape, "threads")
		workload = append(workload, "batch")
		knobs = append(knobs, "no-copy")
	case storage.LogCopy:
		f.StringVar(&o.dop, "dop", "1", "degrees of parallelism of the copy, run in turn: 1,2,4,8 (a database that copies serially runs once at 1)")
		shape = append(shape, "dop")
	}
	expectHelp := "promised rates to hold the measured ones against, KEY=RATE pairs with KEY scan, read, write, bulk or log (logcopy's, and the log rate of write and bulk): e.g. scan=14GB/min or log=48MB/s,write=250MB/min; it reports measured ÷ promised and exits 0"
	if kind == storage.Cache {
		expectHelp = "the cache size promised, cache=SIZE (e.g. cache=2GB), held against the measured bracket: held when the hit share is 95% or more at a working set of that size, or the bracket holds it; it reports and exits 0"
	}
	f.StringVar(&o.expect, "expect", "", expectHelp)
	f.StringVar(&o.price, "price", "", "what the database costs, AMOUNT/hour or AMOUNT/month (730 hours), for the run's cost and the cost per GB moved")
	workload = append(workload, "expect", "price")
	addOutputFlags(cmd, &o.sharedOptions)
	// The shared wording speaks of YCSB's phases and status.interval;
	// a storage run has one phase, and its statements' latencies.
	op := map[storage.Kind]string{storage.Scan: "SCAN-CHUNK", storage.Read: "READ-RANGE", storage.Write: "WRITE-CHUNK", storage.Bulk: "BULK-BATCH", storage.LogCopy: "COPY", storage.Cache: "CACHE-READ"}[kind]
	f.Lookup("hlog").Usage = "also write each second's latency histograms of the experiment's statements to this file as an HdrHistogram interval log, values in microseconds, tag " + kind.String() + "/" + op
	f.Lookup("status").Usage = "print a status line on stderr every 10 s instead of the live progress line a terminal gets"
	// Values worth offering: sizes as storage is sold, the usual curves,
	// and a promise per key with its unit.
	if kind == storage.Cache {
		register(cmd, "max-size", fixedValues([]string{"512MB", "1GB", "4GB"}))
	} else {
		register(cmd, "size", fixedValues([]string{"100MB", "1GB", "4GB", "10GB"}))
	}
	register(cmd, "expect", fixedValues(map[storage.Kind][]string{
		storage.Scan: {"scan=14GB/min"}, storage.Read: {"read=2GB/min"}, storage.Write: {"write=250MB/min", "write=250MB/min,log=48MB/s"},
		storage.Bulk: {"bulk=50MB/s", "bulk=50MB/s,log=48MB/s"}, storage.LogCopy: {"log=48MB/s"}, storage.Cache: {"cache=1GB", "cache=2GB"},
	}[kind]))
	register(cmd, "price", fixedValues([]string{"AMOUNT/hour", "AMOUNT/month"}))
	switch kind {
	case storage.Read, storage.Bulk:
		register(cmd, "threads", fixedValues([]string{"1", "1,2,4,8", "1,4,16"}))
	case storage.LogCopy:
		register(cmd, "dop", fixedValues([]string{"1", "1,2,4,8"}))
	case storage.Write:
		register(cmd, "chunk", fixedValues([]string{"10MB", "100MB", "1GB"}))
	}
	setGroup(f, groupWorkload, workload...)
	setGroup(f, groupShape, shape...)
	if len(knobs) > 0 {
		setGroup(f, groupKnobs, knobs...)
	}
	return cmd
}

// runStorage turns the flags into the experiment's configuration and runs
// it; storage.Run validates it before anything connects.
func runStorage(cmd *cobra.Command, kind storage.Kind, o *storageOptions) error {
	if err := checkMetricsFlags(cmd, &o.sharedOptions); err != nil {
		return err
	}
	// The default database, SQLite, has no cache counters to read: said
	// before a database is made and announced, not after.
	if kind == storage.Cache && o.db == "" && os.Getenv("DBPROBE_DB") == "" {
		return badinput.New("dbprobe storage cache needs a server database's cache counters, and without --db it would use a new SQLite database, which has none; give --db postgres://…, mysql://… or sqlserver://…")
	}
	c := &storage.Config{
		Kind: kind, Duration: o.duration, SettleLimit: o.settleLimit, Payload: o.payload, Batch: o.batch, NoCopy: o.noCopy, Keep: o.keep,
		RestartCmd: o.restartCmd, NoCold: o.warm, RequireCold: o.requireCold,
		DrainTimeout:   o.drainTimeout,
		StatusInterval: 10 * time.Second,
		CommandLine:    commandLine(cmd),
		Flags:          flagSettings(cmd.Flags(), nil, "db"),
	}
	if cmd.Flags().Changed("duration") && o.duration == 0 {
		// 0 is the configuration's "not given", which would silently run
		// the default 60 s.
		return badinput.New("--duration 0s: give a positive duration, e.g. --duration 10s (default 60s); scan and logcopy make at least one pass whatever it is")
	}
	var err error
	// Without --size the experiment chooses (scan from the database's
	// cache), so the flag's default is not taken as given.
	if cmd.Flags().Changed("size") {
		if c.Size, err = storage.ParseSize("--size", o.size); err != nil {
			return err
		}
	}
	if o.maxSize != "" {
		if c.MaxSize, err = storage.ParseSize("--max-size", o.maxSize); err != nil {
			return err
		}
	}
	if cmd.Flags().Changed("settle-limit") && o.settleLimit <= 0 {
		return badinput.New("--settle-limit %s: give a positive duration, e.g. --settle-limit 30s (default %s)", o.settleLimit, storage.DefaultSettleLimit)
	}
	// Only a --chunk given is set: left at 0, the experiment knows the
	// chunk is its default and says so when it clamps it to --size.
	if o.chunk != "" && cmd.Flags().Changed("chunk") {
		if c.Chunk, err = storage.ParseSize("--chunk", o.chunk); err != nil {
			return err
		}
	}
	if o.threads != "" {
		if c.Threads, err = storage.ParseList("--threads", o.threads); err != nil {
			return err
		}
	}
	if o.dop != "" {
		if c.Dops, err = storage.ParseList("--dop", o.dop); err != nil {
			return err
		}
	}
	if o.expect != "" {
		if c.Expect, err = storage.ParseExpect(o.expect); err != nil {
			return err
		}
	}
	if o.price != "" {
		if c.Price, err = storage.ParsePrice(o.price); err != nil {
			return err
		}
	}
	con, err := experiment.NewConsole(cmd.OutOrStdout(), cmd.ErrOrStderr(), o.status, o.quiet)
	if err != nil {
		return err
	}
	defer con.Close()
	c.Target, c.Outputs, c.Monitor = o.experimentConfigs(con)
	c.Stdout, c.Stderr = con.Stdout, con.Stderr
	return storage.Run(cmd.Context(), c)
}

package main

import (
	"bufio"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbprobe/dbprobe/internal/instance"
)

// diskReadBps is the disk's sequential read ceiling from the disk part
// (fio, O_DIRECT, queue depth 32), when it ran: the scan's ratio to it.
var diskReadBps float64

// bytesPerBulkRow is what dbprobe counts per bulk row: its 8-byte id and
// its 1000-byte payload.
const bytesPerBulkRow = 1008

var psqlTime = regexp.MustCompile(`(?m)^Time: ([\d.]+) ms`)

// psqlTimed runs psql on the server with \timing on and returns the
// process and the statement's own time, as psql measured it.
func psqlTimed(pg *instance.Server, env []string, sql string) (proc, time.Duration) {
	p := runProc(env, "psql", pg.URL(), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", `\timing on`, "-c", sql)
	m := psqlTime.FindAllSubmatch(p.out, -1)
	if m == nil {
		fatalf("psql printed no time for %s:\n%s", sql, p.out)
	}
	ms, _ := strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	return p, time.Duration(ms * float64(time.Millisecond))
}

// psqlValue runs one query and returns its one value.
func psqlValue(pg *instance.Server, sql string) string {
	return strings.TrimSpace(output("psql", pg.URL(), "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql))
}

// evictTable makes a PostgreSQL table cold as dbprobe does: fdatasync,
// then posix_fadvise DONTNEED, on its files (segments, free space and
// visibility maps).
func evictTable(pg *instance.Server, table string) {
	base := filepath.Join(pg.DataDir(), psqlValue(pg, "SELECT pg_relation_filepath('"+table+"')"))
	files := []string{base, base + "_fsm", base + "_vm"}
	for i := 1; ; i++ {
		seg := base + "." + strconv.Itoa(i)
		if _, err := os.Stat(seg); err != nil {
			break
		}
		files = append(files, seg)
	}
	for _, f := range files {
		fd, err := unix.Open(f, unix.O_RDONLY, 0)
		if err != nil {
			continue // a map the table does not have yet
		}
		check(unix.Fdatasync(fd))
		check(unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED))
		unix.Close(fd)
	}
}

// diskRead is the bytes read so far by the block device under dir.
func diskRead(dir string) int64 {
	name := filepath.Base(strings.Fields(deviceOf(dir))[0])
	f, err := os.Open("/proc/diskstats")
	check(err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 5 && fs[2] == name {
			n, _ := strconv.ParseInt(fs[5], 10, 64)
			return n * 512
		}
	}
	return -1
}

// serialPG keeps psql's scans serial, as dbprobe's chunks are (a TID
// range scan has no parallel plan in PostgreSQL 15).
var serialPG = []string{"PGOPTIONS=-c max_parallel_workers_per_gather=0"}

// serialHeapPG also keeps a plain count(*) on the table itself: after
// dbprobe's VACUUM every page is all-visible, and PostgreSQL would answer
// from the far smaller primary-key index (an index-only scan).
var serialHeapPG = []string{"PGOPTIONS=-c max_parallel_workers_per_gather=0 -c enable_indexonlyscan=off -c enable_indexscan=off -c enable_bitmapscan=off"}

// scanPairs compares dbprobe storage scan with psql's SELECT count(*) on
// the same cold table, the two taking turns going first.
func scanPairs(c config, pg *instance.Server) {
	const table = "dbprobe_storage_scan"
	sameSQL := "SELECT count(*), coalesce(sum(octet_length(payload)), 0) FROM " + table
	countSQL := "SELECT count(*) FROM " + table
	var dAll, dLater, pSame, pCount, dCPU, pCPU []float64
	var rows []string
	var tableBytes int64
	for rep := range c.reps {
		var d dbprobeRun
		dbp := func() {
			d = dbprobeStorage(c, "scan", "--db", pg.URL(), "--size", c.size, "--duration", "30s", "--keep")
			tableBytes = d.sum.Table.Bytes
		}
		var sameRate, countRate, devShare float64
		var pp proc
		ps := func() {
			// The same work per row as dbprobe's chunks, then the plain
			// count(*), each on the table made cold the same way.
			evictTable(pg, table)
			r0 := diskRead(c.dir)
			p, t := psqlTimed(pg, serialPG, sameSQL)
			devShare = float64(diskRead(c.dir)-r0) / float64(tableBytes)
			sameRate = float64(tableBytes) / t.Seconds()
			pp = p
			evictTable(pg, table)
			_, t = psqlTimed(pg, serialHeapPG, countSQL)
			countRate = float64(tableBytes) / t.Seconds()
		}
		order := inTurn(rep, "dbprobe", dbp, "psql", ps)
		// dbprobe's passes after its first: the table as psql finds it,
		// its hint bits set by the first pass.
		var lb int64
		var ls float64
		for i, s := range d.sum.Steps {
			if i > 0 && s.Rows == d.sum.Table.Rows {
				lb += s.Bytes
				ls += s.Seconds
			}
		}
		later := 0.0
		if ls > 0 {
			later = float64(lb) / ls
		}
		dAll, dLater = append(dAll, d.sum.Rate), append(dLater, later)
		pSame, pCount = append(pSame, sameRate), append(pCount, countRate)
		dCPU = append(dCPU, d.cpu.Seconds()/(float64(d.sum.Bytes)/1e9))
		pCPU = append(pCPU, pp.cpu.Seconds()/(float64(tableBytes)/1e9))
		// The device's writes during each pass show what the first pass
		// pays for: the rows' hint bits, set and written back as it reads.
		var passRates, passWrites []float64
		for _, s := range d.sum.Steps {
			if s.Rows == d.sum.Table.Rows {
				passRates = append(passRates, mb(s.Rate))
				passWrites = append(passWrites, mb(float64(s.DeviceWrite)))
			}
		}
		passes := []string{fmt.Sprintf("%d whole", len(passRates))}
		if len(passRates) > 0 {
			passes = append(passes, fmt.Sprintf("first %.0f (device wrote %.0f MB), median %.0f, %.0f–%.0f (median write %.0f MB)",
				passRates[0], passWrites[0], medianOf(passRates), slices.Min(passRates), slices.Max(passRates), medianOf(passWrites)))
		}
		rows = append(rows, fmt.Sprintf("| %d | %s | %.0f | %.0f | %s | %.0f | %.0f | %.0f%% | %.0f%% |", rep+1, order, mb(d.sum.Rate), mb(later),
			strings.Join(passes, ", "), mb(sameRate), mb(countRate), 100*float64(d.sum.Proof.DeviceBytes)/float64(d.sum.Bytes), 100*devShare))
	}
	fmt.Printf("## PostgreSQL cold scan: dbprobe storage scan against psql, %s table (%.2f GB on disk), %d pairs\n\n", c.size, float64(tableBytes)/1e9, c.reps)
	fmt.Printf("dbprobe: `dbprobe storage scan --db $PG --size %s --duration 30s --keep` (serial chunks of ~16 MB by ctid range, each table file evicted before each pass).\n", c.size)
	fmt.Printf("psql: `PGOPTIONS='-c max_parallel_workers_per_gather=0' psql -c '\\timing on' -c '%s'`, then `… -c '%s'` with index scans off (the table is vacuumed, so count(*) would read only the key's index), each after the same eviction (fdatasync + posix_fadvise DONTNEED on the table's files); shared_buffers 16 MB. Rates are the table's size on disk over the time.\n\n", sameSQL, countSQL)
	fmt.Println("| pair | order | dbprobe MB/s (all passes) | dbprobe MB/s (passes 2…) | dbprobe passes, MB/s | psql, dbprobe's expression | psql count(*) | device read / bytes, dbprobe | psql |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Println(r)
	}
	fmt.Println()
	fmt.Printf("- dbprobe (all passes) / psql, same expression: %s\n", ratios(dAll, pSame))
	fmt.Printf("- dbprobe (passes 2…) / psql, same expression: %s\n", ratios(dLater, pSame))
	fmt.Printf("- dbprobe (passes 2…) / psql count(*): %s\n", ratios(dLater, pCount))
	fmt.Printf("- client CPU, s per GB scanned: dbprobe %.3f, psql %.4f (medians)\n", medianOf(dCPU), medianOf(pCPU))
	if diskReadBps > 0 {
		fmt.Printf("- against the disk's sequential read (%.0f MB/s): psql same expression %.2f×, count(*) %.2f×, dbprobe passes 2… %.2f× (medians)\n",
			mb(diskReadBps), medianOf(pSame)/diskReadBps, medianOf(pCount)/diskReadBps, medianOf(dLater)/diskReadBps)
	}
	fmt.Println()
}

// readPairs compares dbprobe storage read at 1 thread with psql's \copy of
// the same table to /dev/null.
func readPairs(c config, pg *instance.Server) {
	const table = "dbprobe_storage_read"
	sql := `\copy (SELECT id, payload FROM ` + table + `) TO '/dev/null'`
	var dAll, dLater, pr, dCPU, pCPU []float64
	var rss []int64
	var rows []string
	for rep := range c.reps {
		var d dbprobeRun
		dbp := func() {
			d = dbprobeStorage(c, "read", "--db", pg.URL(), "--size", c.size, "--threads", "1", "--duration", "20s", "--keep")
		}
		var p proc
		var t time.Duration
		ps := func() { p, t = psqlTimed(pg, nil, sql) }
		order := inTurn(rep, "dbprobe", dbp, "psql", ps)
		perRow := float64(d.sum.Bytes) / float64(d.sum.Rows)
		lap := perRow * float64(d.sum.Table.Rows)
		psqlBytes := lap
		// After dbprobe's first lap round the table: the table as psql
		// finds it (its first lap after the fill sets the rows' hint bits).
		var cum, lb, ls float64
		for _, s := range d.sum.PerSecond {
			if cum >= lap {
				lb += float64(s.Bytes)
				ls += s.Seconds
			}
			cum += float64(s.Bytes)
		}
		later := math.NaN() // dbprobe did not finish its first lap
		if ls > 0 {
			later = lb / ls
		}
		dAll, dLater, pr = append(dAll, d.sum.Rate), append(dLater, later), append(pr, psqlBytes/t.Seconds())
		dCPU = append(dCPU, d.cpu.Seconds()/(float64(d.sum.Bytes)/1e9))
		pCPU = append(pCPU, p.cpu.Seconds()/(psqlBytes/1e9))
		rss = append(rss, d.maxRSS)
		rows = append(rows, fmt.Sprintf("| %d | %s | %.0f | %.0f | %.0f | %.2f | %.2f | %.0f |", rep+1, order, mb(d.sum.Rate), mb(later), mb(psqlBytes/t.Seconds()),
			dCPU[rep], pCPU[rep], mb(float64(d.maxRSS))))
	}
	fmt.Printf("## PostgreSQL read into the client, 1 thread: dbprobe storage read against psql \\copy, %s table, %d pairs\n\n", c.size, c.reps)
	fmt.Printf("dbprobe: `dbprobe storage read --db $PG --size %s --threads 1 --duration 20s --keep` (SELECT id, payload … WHERE id BETWEEN, ~4 MB of payload per range, round the table).\n", c.size)
	fmt.Printf("psql: `psql -c '\\timing on' -c \"%s\"` on the table dbprobe kept. Rates are payload bytes received per second (psql: the table's rows × dbprobe's bytes per row); the table is read from the OS page cache by both.\n\n", sql)
	fmt.Println("| pair | order | dbprobe MB/s | dbprobe MB/s after its first lap | psql MB/s | dbprobe CPU s/GB | psql CPU s/GB | dbprobe peak RSS MB |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Println(r)
	}
	fmt.Println()
	fmt.Printf("- dbprobe / psql: %s; after dbprobe's first lap: %s\n", ratios(dAll, pr), ratios(dLater, pr))
	fmt.Printf("- client CPU per GB received: dbprobe %.2f s, psql %.2f s (medians); ratio %s\n", medianOf(dCPU), medianOf(pCPU), ratios(dCPU, pCPU))
	fmt.Printf("- dbprobe peak RSS at 1 thread: %.0f MB (median)\n\n", mb(float64(medianInt(rss))))
}

// writeRowsFile writes the rows dbprobe's bulk loads (ids 1…n, 1000 × 'x')
// in the text format COPY and LOAD DATA both read (tab, newline).
func writeRowsFile(c config, n int64) string {
	path := filepath.Join(c.work, fmt.Sprintf("rows-%d.tsv", n))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	f, err := os.Create(path)
	check(err)
	w := bufio.NewWriterSize(f, 1<<20)
	payload := strings.Repeat("x", 1000)
	for i := int64(1); i <= n; i++ {
		w.WriteString(strconv.FormatInt(i, 10))
		w.WriteByte('\t')
		w.WriteString(payload)
		w.WriteByte('\n')
	}
	check(w.Flush())
	check(f.Close())
	os.Chmod(path, 0o644)
	return path
}

// bulkPairs compares dbprobe storage bulk at 1 writer with psql's \copy of
// the same rows from a file.
func bulkPairs(c config, pg *instance.Server) {
	n := sizeBytes(c.bulkSize) / bytesPerBulkRow
	file := writeRowsFile(c, n)
	create := "CREATE TABLE bench_bulk (id bigint PRIMARY KEY, payload char(1000) NOT NULL); ALTER TABLE bench_bulk ALTER COLUMN payload SET STORAGE PLAIN"
	load := `\copy bench_bulk FROM '` + file + `'`
	var dr, pr, dCPU, pCPU []float64
	var rows []string
	for rep := range c.reps {
		var d dbprobeRun
		dbp := func() {
			d = dbprobeStorage(c, "bulk", "--db", pg.URL(), "--size", c.bulkSize, "--threads", "1", "--duration", "10m")
			if d.sum.Rows != n {
				fatalf("dbprobe loaded %d rows, the file holds %d", d.sum.Rows, n)
			}
		}
		var p proc
		var t time.Duration
		ps := func() {
			output("psql", pg.URL(), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", "DROP TABLE IF EXISTS bench_bulk", "-c", create)
			p, t = psqlTimed(pg, nil, load)
			if got := psqlValue(pg, "SELECT count(*) FROM bench_bulk"); got != strconv.FormatInt(n, 10) {
				fatalf("psql \\copy loaded %s rows of %d", got, n)
			}
			output("psql", pg.URL(), "-X", "-q", "-c", "DROP TABLE bench_bulk")
		}
		order := inTurn(rep, "dbprobe", dbp, "psql", ps)
		loaded := float64(n * bytesPerBulkRow)
		dr, pr = append(dr, float64(d.sum.Rows)/d.sum.Seconds), append(pr, float64(n)/t.Seconds())
		dCPU, pCPU = append(dCPU, d.cpu.Seconds()/(loaded/1e9)), append(pCPU, p.cpu.Seconds()/(loaded/1e9))
		rows = append(rows, fmt.Sprintf("| %d | %s | %.0f | %.0f | %.2f | %.2f | %.0f |", rep+1, order, dr[rep], pr[rep], dCPU[rep], pCPU[rep], mb(float64(d.maxRSS))))
	}
	fmt.Printf("## PostgreSQL bulk load, 1 writer: dbprobe storage bulk against psql \\copy, %d rows (%s), %d pairs\n\n", n, c.bulkSize, c.reps)
	fmt.Printf("dbprobe: `dbprobe storage bulk --db $PG --size %s --threads 1 --duration 10m` (COPY FROM STDIN, one COPY and one transaction per 1,000-row batch).\n", c.bulkSize)
	fmt.Printf("psql: `psql -c '\\timing on' -c \"\\copy bench_bulk FROM '$FILE'\"` into `%s`, one COPY and one transaction; the file (the same ids and payloads, %.2f GB) is in the page cache.\n\n", create, float64(fileSize(file))/1e9)
	fmt.Println("| pair | order | dbprobe rows/s | psql rows/s | dbprobe CPU s/GB | psql CPU s/GB | dbprobe peak RSS MB |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Println(r)
	}
	fmt.Println()
	fmt.Printf("- dbprobe / psql, rows/s: %s\n", ratios(dr, pr))
	fmt.Printf("- client CPU per GB loaded: dbprobe %.2f s, psql %.2f s (medians); ratio %s\n\n", medianOf(dCPU), medianOf(pCPU), ratios(dCPU, pCPU))
}

// myBulkPairs compares dbprobe storage bulk on MariaDB at 1 writer with
// the mariadb client's LOAD DATA LOCAL INFILE of the same rows.
func myBulkPairs(c config, my *instance.Server) {
	n := sizeBytes(c.bulkSize) / bytesPerBulkRow
	file := writeRowsFile(c, n)
	u, err := url.Parse(my.URL())
	check(err)
	pw, _ := u.User.Password()
	client := []string{"--no-defaults", "--local-infile=1", "-h", u.Hostname(), "-P", u.Port(), "-u", u.User.Username(), "dbprobe"}
	env := []string{"MYSQL_PWD=" + pw}
	sqlOf := func(sql string) string {
		p := runProc(env, "mariadb", append(client, "-N", "-e", sql)...)
		return strings.TrimSpace(string(p.out))
	}
	create := "CREATE TABLE bench_bulk (id BIGINT NOT NULL, payload VARBINARY(1000) NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB"
	load := "LOAD DATA LOCAL INFILE '" + file + "' INTO TABLE bench_bulk"
	took := regexp.MustCompile(`Query OK, (\d+) rows affected[^(]*\(([\d.]+) sec\)`)
	var dr, pr, dCPU, pCPU []float64
	var rows []string
	for rep := range c.reps {
		var d dbprobeRun
		dbp := func() {
			d = dbprobeStorage(c, "bulk", "--db", my.URL(), "--size", c.bulkSize, "--threads", "1", "--duration", "10m")
			if d.sum.Rows != n {
				fatalf("dbprobe loaded %d rows, the file holds %d", d.sum.Rows, n)
			}
		}
		var p proc
		var secs float64
		ld := func() {
			sqlOf("DROP TABLE IF EXISTS bench_bulk")
			sqlOf(create)
			// -vvv prints the statement's own time, as psql's \timing does.
			p = runProc(env, "mariadb", append(client, "-vvv", "-e", load)...)
			m := took.FindSubmatch(p.out)
			if m == nil || string(m[1]) != strconv.FormatInt(n, 10) {
				fatalf("LOAD DATA: no row count of %d with its time in:\n%s", n, p.out)
			}
			secs, _ = strconv.ParseFloat(string(m[2]), 64)
			sqlOf("DROP TABLE bench_bulk")
		}
		order := inTurn(rep, "dbprobe", dbp, "LOAD DATA", ld)
		loaded := float64(n * bytesPerBulkRow)
		dr, pr = append(dr, float64(d.sum.Rows)/d.sum.Seconds), append(pr, float64(n)/secs)
		dCPU, pCPU = append(dCPU, d.cpu.Seconds()/(loaded/1e9)), append(pCPU, p.cpu.Seconds()/(loaded/1e9))
		rows = append(rows, fmt.Sprintf("| %d | %s | %.0f | %.0f | %.2f | %.2f |", rep+1, order, dr[rep], pr[rep], dCPU[rep], pCPU[rep]))
	}
	fmt.Printf("## MariaDB bulk load, 1 writer: dbprobe storage bulk against LOAD DATA LOCAL INFILE, %d rows (%s), %d pairs\n\n", n, c.bulkSize, c.reps)
	fmt.Printf("dbprobe: `dbprobe storage bulk --db $MY --size %s --threads 1 --duration 10m` (LOAD DATA LOCAL INFILE, one statement and one transaction per 1,000-row batch).\n", c.bulkSize)
	fmt.Printf("mariadb: `mariadb --local-infile=1 -vvv -e \"%s\"` into `%s`, one statement and one transaction, its own reported time; the file is in the page cache. innodb_buffer_pool_size 256M, innodb_flush_log_at_trx_commit=1.\n\n",
		strings.Replace(load, file, "$FILE", 1), create)
	fmt.Println("| pair | order | dbprobe rows/s | LOAD DATA rows/s | dbprobe CPU s/GB | mariadb client CPU s/GB |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Println(r)
	}
	fmt.Println()
	fmt.Printf("- dbprobe / LOAD DATA, rows/s: %s\n", ratios(dr, pr))
	fmt.Printf("- client CPU per GB loaded: dbprobe %.2f s, mariadb %.2f s (medians); ratio %s\n\n", medianOf(dCPU), medianOf(pCPU), ratios(dCPU, pCPU))
}

// rssRuns measures dbprobe's peak RSS in read and bulk at 1 and 16
// threads on a table of --size.
func rssRuns(c config, pg *instance.Server) {
	fmt.Printf("## Peak RSS of dbprobe storage read and bulk, PostgreSQL, %s\n\n", c.size)
	fmt.Println("| experiment | threads | peak RSS MB | MB/s | command |")
	fmt.Println("|---|---|---|---|---|")
	for _, exp := range []string{"read", "bulk"} {
		for _, th := range []string{"1", "16"} {
			args := []string{exp, "--db", pg.URL(), "--size", c.size, "--threads", th, "--duration", "15s"}
			if exp == "bulk" {
				args[len(args)-1] = "10m"
			}
			d := dbprobeStorage(c, args...)
			shown := strings.Replace(strings.Join(args, " "), pg.URL(), "$PG", 1)
			fmt.Printf("| %s | %s | %.0f | %.0f | `dbprobe storage %s` |\n", exp, th, mb(float64(d.maxRSS)), mb(d.sum.Rate), shown)
		}
	}
	fmt.Println()
}

func medianInt(vs []int64) int64 {
	fs := make([]float64, len(vs))
	for i, v := range vs {
		fs[i] = float64(v)
	}
	return int64(medianOf(fs))
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	check(err)
	return st.Size()
}

// inTurn runs the two sides of pair rep, a first in even pairs and b
// first in odd ones, so that a noisy neighbour hurts both alike, and
// returns the order they ran in.
func inTurn(rep int, aName string, a func(), bName string, b func()) string {
	if rep%2 == 0 {
		a()
		b()
		return aName + ", " + bName
	}
	b()
	a()
	return bName + ", " + aName
}

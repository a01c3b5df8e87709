package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/instance"
)

// study runs the experiments of docs/experiments/storage-limits.md:
// studies 3 and 4 of the shared STUDIES.md on PostgreSQL, MariaDB and
// SQLite, then the table copy with the log's device capped.
func study(ctx context.Context, c config) {
	fmt.Printf("## Study runs: --size %s (scan, read, write, bulk), copies of %s\n\n", c.studySize, c.copySize)
	want := func(p string) bool { return slices.Contains(c.studyParts, p) }
	if want("postgres") {
		pg := startServer(ctx, c, instance.Postgres, map[string]string{"shared_buffers": "16MB"})
		studyRuns(c, "PostgreSQL (shared_buffers 16MB)", "$PG", pg.URL())
		pg.Close()
	}
	if want("mariadb") {
		my := startServer(ctx, c, instance.MariaDB, mariaSettings)
		studyRuns(c, "MariaDB (innodb_buffer_pool_size 256M)", "$MY", my.URL())
		my.Close()
	}
	if want("sqlite") {
		lite := filepath.Join(c.work, "sqlite")
		check(os.MkdirAll(lite, 0o755))
		studyRuns(c, "SQLite", "$SQLITE", "sqlite://"+filepath.Join(lite, "study.db"))
	}
	if want("capped") {
		cappedCopies(ctx, c)
	}
}

// studyRuns runs each experiment once on one database and prints its
// command and its summary.
func studyRuns(c config, name, shown, url string) {
	runs := [][]string{
		{"scan", "--size", c.studySize, "--duration", "30s"},
		{"read", "--size", c.studySize, "--threads", "1,2,4,8", "--duration", "10s"},
		{"write", "--size", c.studySize, "--chunk", "100MB", "--duration", "5m"},
		{"bulk", "--size", c.studySize, "--threads", "1,2,4", "--duration", "5m"},
		{"logcopy", "--size", c.copySize, "--dop", "1,2,4,8", "--duration", "15s", "--expect", "log=48MB/s"},
	}
	for _, args := range runs {
		args = append([]string{"storage", args[0], "--db", url}, args[1:]...)
		showRun(name, shown, url, nil, c.bin, args)
	}
}

// showRun runs dbprobe and prints the command, with the URL shown as a
// name, and the summary lines of its output; prefix is a command that runs
// before dbprobe (the capped SQLite run's cgroup entry).
func showRun(name, shown, url string, prefix []string, bin string, args []string) {
	cmdArgs := append(append([]string{}, prefix...), bin)
	cmdArgs = append(cmdArgs, args...)
	line := "dbprobe " + strings.ReplaceAll(strings.Join(args, " "), url, shown)
	fmt.Printf("### %s: %s\n\n```\n$ %s\n", name, args[1], line)
	cmd := exec.Command(cmdArgs[0], cmdArgs[1:]...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		fatalf("%s: %v\n%s%s", line, err, out.String(), errOut.String())
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		// The summary is the comment lines and the experiment's own rates;
		// the per-operation latency lines are left out.
		if strings.HasPrefix(l, "# ") || (strings.HasPrefix(l, "[") && !strings.Contains(l, "Latency") && !strings.Contains(l, "Return=") && !strings.Contains(l, "Operations")) {
			fmt.Println(strings.ReplaceAll(l, url, shown))
		}
	}
	fmt.Print("```\n\n")
}

// cappedCopies copies a table with the log's device capped at --log-cap:
// PostgreSQL's WAL, MariaDB's redo log and SQLite's whole database (its
// WAL lives beside it) on a loop-mounted file system whose writes are
// throttled for the database's processes.
func cappedCopies(ctx context.Context, c config) {
	capMB := strconv.FormatFloat(float64(c.logCap)/1e6, 'f', -1, 64)
	expect := "log=" + capMB + "MB/s"
	fmt.Printf("## Capped log: the log's device throttled to %s MB/s of writes (cgroup v1 blkio.throttle.write_bps_device on a loop-mounted ext4)\n\n", capMB)

	dir, err := os.MkdirTemp(c.work, "cap-pg-")
	check(err)
	os.Chmod(dir, 0o755)
	dev := newLoopDev(dir, 3072, "postgres")
	// New WAL segments are not zero-filled (wal_init_zero=off), which would
	// write each twice: the device's cap is then the log's.
	pg, err := instance.Start(ctx, instance.Postgres, instance.Options{
		Settings: map[string]string{"shared_buffers": "16MB", "wal_init_zero": "off"},
		InitArgs: []string{"--waldir=" + filepath.Join(dev.mnt, "wal")},
		DataDir:  filepath.Join(dir, "data"),
	})
	check(err)
	atExit(func() { pg.Close() })
	g := newCapGroup(dev, c.logCap)
	g.add(pidFile(filepath.Join(pg.DataDir(), "postmaster.pid")))
	showRun("PostgreSQL, WAL on "+dev.name+" capped at "+capMB+" MB/s", "$PG", pg.URL(), nil, c.bin,
		[]string{"storage", "logcopy", "--db", pg.URL(), "--size", c.copySize, "--dop", "1,2,4,8", "--duration", "15s", "--expect", expect})
	g.close()
	pg.Close()
	dev.close()

	dir, err = os.MkdirTemp(c.work, "cap-my-")
	check(err)
	os.Chmod(dir, 0o755)
	dev = newLoopDev(dir, 1024, "")
	logDir := filepath.Join(dev.mnt, "redo")
	check(os.MkdirAll(logDir, 0o755))
	settings := map[string]string{"innodb_log_group_home_dir": logDir}
	for k, v := range mariaSettings {
		settings[k] = v
	}
	my, err := instance.Start(ctx, instance.MariaDB, instance.Options{Settings: settings, DataDir: filepath.Join(dir, "data")})
	check(err)
	atExit(func() { my.Close() })
	g = newCapGroup(dev, c.logCap)
	g.add(pidFile(filepath.Join(my.Dir(), "mysqld.pid")))
	showRun("MariaDB, redo log on "+dev.name+" capped at "+capMB+" MB/s", "$MY", my.URL(), nil, c.bin,
		[]string{"storage", "logcopy", "--db", my.URL(), "--size", c.copySize, "--dop", "1,2,4,8", "--duration", "15s", "--expect", expect})
	g.close()
	my.Close()
	dev.close()

	dir, err = os.MkdirTemp(c.work, "cap-lite-")
	check(err)
	dev = newLoopDev(dir, 3072, "")
	g = newCapGroup(dev, c.logCap)
	url := "sqlite://" + filepath.Join(dev.mnt, "study.db")
	// SQLite runs inside dbprobe: dbprobe itself goes into the group.
	prefix := []string{"sh", "-c", `echo $$ > "$0" && shift && exec "$@"`, filepath.Join(g.dir, "cgroup.procs"), "--"}
	showRun("SQLite, database and WAL on "+dev.name+" capped at "+capMB+" MB/s", "$SQLITE", url, prefix, c.bin,
		[]string{"storage", "logcopy", "--db", url, "--size", c.copySize, "--dop", "1,2,4,8", "--duration", "15s", "--expect", expect})
	g.close()
	dev.close()
}

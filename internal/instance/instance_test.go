package instance

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/gomodule/redigo/redis"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// startServer starts a server of kind, skipping (failing under CI=true)
// when its binaries are missing; it is closed when the test ends.
func startServer(t *testing.T, kind Kind, opts Options) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, kind, opts)
	if errors.Is(err, ErrNotInstalled) {
		testdb.Unavailable(t, err.Error())
	}
	if err != nil {
		t.Fatalf("Start(%s): %v", kind, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// openSQL opens a database/sql pool on the server's URL.
func openSQL(t *testing.T, s *Server) *sql.DB {
	t.Helper()
	var db *sql.DB
	if s.Kind() == Postgres {
		cfg, err := pgx.ParseConfig(s.URL())
		if err != nil {
			t.Fatal(err)
		}
		db = stdlib.OpenDB(*cfg)
	} else {
		cfg, err := testdb.MySQLConfig(s.URL())
		if err != nil {
			t.Fatal(err)
		}
		cfg.Logger = quietLogger{}
		connector, err := mysql.NewConnector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		db = sql.OpenDB(connector)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestServerLifecycle(t *testing.T) {
	for _, kind := range []Kind{Postgres, MariaDB} {
		t.Run(kind.String(), func(t *testing.T) {
			testLifecycle(t, kind)
		})
	}
}

// testLifecycle runs one server through a crash, a clean restart, a
// freeze and its removal, checking a committed row survives each.
func testLifecycle(t *testing.T, kind Kind) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := startServer(t, kind, Options{})
	if s.Version() == "" {
		t.Error("Version is empty")
	}
	if !strings.Contains(s.URL(), "@127.0.0.1:") || !strings.Contains(s.URL(), s.Password()) {
		t.Errorf("URL %q does not name 127.0.0.1 with the password", strings.ReplaceAll(s.URL(), s.Password(), "xxxxx"))
	}

	db := openSQL(t, s)
	if _, err := db.ExecContext(ctx, "CREATE TABLE kept (id INT PRIMARY KEY, v VARCHAR(20))"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO kept VALUES (1, 'committed')"); err != nil {
		t.Fatal(err)
	}
	checkRow := func(when string) {
		t.Helper()
		var v string
		if err := db.QueryRowContext(ctx, "SELECT v FROM kept WHERE id = 1").Scan(&v); err != nil {
			t.Fatalf("%s: read the committed row: %v", when, err)
		}
		if v != "committed" {
			t.Fatalf("%s: row holds %q", when, v)
		}
	}

	if err := s.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	err := db.PingContext(short)
	cancelShort()
	if err == nil {
		t.Fatal("the server answers after Kill")
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatalf("Restart after Kill: %v", err)
	}
	db.SetMaxIdleConns(0) // drop connections to the killed server
	db.SetMaxIdleConns(2)
	checkRow("after Kill and Restart")

	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatalf("Restart after Stop: %v", err)
	}
	db.SetMaxIdleConns(0)
	db.SetMaxIdleConns(2)
	checkRow("after Stop and Restart")

	// A connection opened before the freeze: a new one would only show
	// that logins hang.
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := s.Pause(); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	frozen, cancelFrozen := context.WithTimeout(ctx, 300*time.Millisecond)
	var one int
	err = conn.QueryRowContext(frozen, "SELECT 1").Scan(&one)
	cancelFrozen()
	if err == nil {
		t.Error("a query on the paused server answered")
	}
	if err := s.Resume(); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	checkRow("after Resume")

	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Close (%v)", dir, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Restart(ctx); err == nil {
		t.Error("Restart after Close succeeded")
	}
}

// TestSettingsApply checks that a setting reaches the server.
func TestSettingsApply(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := startServer(t, Postgres, Options{Settings: map[string]string{"synchronous_commit": "off"}})
	var v string
	if err := openSQL(t, s).QueryRowContext(ctx, "SHOW synchronous_commit").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != "off" {
		t.Errorf("synchronous_commit = %q, want off", v)
	}
}

func TestMissingBinaries(t *testing.T) {
	empty := t.TempDir()
	for _, kind := range []Kind{Postgres, MariaDB} {
		_, err := Start(context.Background(), kind, Options{Bindir: empty})
		if !errors.Is(err, ErrNotInstalled) || !badinput.Is(err) {
			t.Errorf("%s in an empty bindir: %v, want bad input wrapping ErrNotInstalled", kind, err)
			continue
		}
		pkg := map[Kind]string{Postgres: "postgresql", MariaDB: "mariadb-server"}[kind]
		if !strings.Contains(err.Error(), "Debian package "+pkg) {
			t.Errorf("%s: %q does not name the Debian package %s", kind, err, pkg)
		}
	}
}

func TestBadSettings(t *testing.T) {
	for _, settings := range []map[string]string{
		{"a b": "1"},
		{"x": "1\ny = 2"},
	} {
		if _, err := Start(context.Background(), Postgres, Options{Settings: settings}); !badinput.Is(err) {
			t.Errorf("Start with %q: %v, want bad input", settings, err)
		}
	}
}

func TestBadPlacement(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "kept"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string]Options{
		"data directory not empty": {DataDir: full},
		"relative data directory":  {DataDir: "data"},
		"address not an IP":        {Addr: "localhost"},
		"namespace, no address":    {Netns: "elsewhere"},
	} {
		if _, err := Start(context.Background(), Postgres, opts); !badinput.Is(err) {
			t.Errorf("%s: Start: %v, want bad input", name, err)
		}
	}
	// The data directory refused was left as it was.
	if _, err := os.Stat(filepath.Join(full, "kept")); err != nil {
		t.Errorf("a refused data directory lost its file: %v", err)
	}
}

// TestDataDirElsewhere puts the data directory outside the temporary
// directory, as a test does on a small file system: the server runs from
// it, says where it is, and Close removes it.
func TestDataDirElsewhere(t *testing.T) {
	// Not t.TempDir, which others may not enter: PostgreSQL runs as the
	// postgres user when the test runs as root.
	parent, err := os.MkdirTemp("", "dbprobe-datadir-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if os.Geteuid() == 0 {
		if _, uid, gid, err := lookupCredential("postgres"); err == nil {
			os.Chown(parent, uid, gid)
		}
	}
	data := filepath.Join(parent, "pgdata")
	s := startServer(t, Postgres, Options{DataDir: data, InitArgs: []string{"--wal-segsize=1"}})
	if s.DataDir() != data {
		t.Errorf("DataDir() = %s, want %s", s.DataDir(), data)
	}
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
		t.Errorf("no cluster in %s: %v", data, err)
	}
	var segsize string
	if err := openSQL(t, s).QueryRow("SHOW wal_segment_size").Scan(&segsize); err != nil || segsize != "1MB" {
		t.Errorf("wal_segment_size %q (%v): initdb's extra arguments were not used", segsize, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("Close left the data directory %s: %v", data, err)
	}
}

func TestMariaDBVersion(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)": "MariaDB 10.11.19",
		"/usr/sbin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)":               "MySQL 8.0.36",
	} {
		if got := mariadbVersion(in); got != want {
			t.Errorf("mariadbVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRedisLifecycle: a key written survives a clean stop and, once the
// append-only file has been synced (every second), a kill; a paused
// server does not answer; Close removes its files.
func TestRedisLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := startServer(t, Redis, Options{})
	if !strings.HasPrefix(s.Version(), "Redis ") || !strings.HasPrefix(s.URL(), "redis://:") {
		t.Fatalf("version %q, URL scheme of %q", s.Version(), strings.ReplaceAll(s.URL(), s.Password(), "xxxxx"))
	}
	c := testdb.OpenRedis(t, s.URL())
	if _, err := c.Do(ctx, "SET", "kept", "committed"); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		if v, err := redis.String(c.Do(ctx, "GET", "kept")); err != nil || v != "committed" {
			t.Fatalf("%s: GET kept = %q, %v", when, v, err)
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatalf("Restart after Stop: %v", err)
	}
	check("after Stop and Restart")

	time.Sleep(1500 * time.Millisecond) // appendfsync everysec
	if err := s.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatalf("Restart after Kill: %v", err)
	}
	check("after Kill and Restart")

	if err := s.Pause(); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err := c.Do(short, "PING")
	cancelShort()
	if err == nil {
		t.Fatal("a paused server answered PING")
	}
	if err := s.Resume(); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	check("after Resume")

	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s still exists after Close: %v", dir, err)
	}
}

// starterEnv makes the test binary the starter process of
// TestServerDiesWithItsStarter, for the kind of server it names.
const starterEnv = "DBPROBE_INSTANCE_STARTER"

// When the process that started a server dies, even by SIGKILL, the
// server dies too: no throwaway server is left holding its port.
// PostgreSQL runs as the postgres user when the test runs as root, the
// case where the kernel could forget the signal with the change of user.
func TestServerDiesWithItsStarter(t *testing.T) {
	kinds := map[string]Kind{"redis": Redis, "postgres": Postgres}
	if name := os.Getenv(starterEnv); name != "" {
		// The starter: start a server, say which, and wait to be killed.
		s, err := Start(context.Background(), kinds[name], Options{})
		if err != nil {
			fmt.Printf("error %v\n", err)
			return
		}
		fmt.Printf("started %d %s\n", s.cmd.Process.Pid, s.Dir())
		time.Sleep(time.Minute)
		s.Close()
		return
	}
	for name := range kinds {
		t.Run(name, func(t *testing.T) {
			// Any dbprobe process's Start removes a dead starter's
			// directory (removeOrphans), so one running beside this test
			// (another package's tests) may take it before this test's
			// Start can show that it does: that attempt proves nothing,
			// and the scenario runs again.
			for attempt := 1; ; attempt++ {
				if killStarter(t, name) {
					return
				}
				if attempt == starterAttempts {
					t.Fatalf("in %d attempts another process always removed the killed starter's directory before this test's Start", attempt)
				}
				t.Logf("attempt %d: another process removed the killed starter's directory first; again", attempt)
			}
		})
	}
}

// starterAttempts bounds the runs of killStarter that another process
// spoiled.
const starterAttempts = 3

// killStarter runs a starter of the named kind of server, kills it with
// SIGKILL, waits for its server to end and checks what the next Start
// removes. It returns false, having checked nothing about the removal,
// when the killed starter's directory was gone before that Start.
func killStarter(t *testing.T, name string) bool {
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithItsStarter$")
	cmd.Env = append(os.Environ(), starterEnv+"="+name)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var pid int
	var dir string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		line := lines.Text()
		if msg, ok := strings.CutPrefix(line, "error "); ok {
			if strings.Contains(msg, ErrNotInstalled.Error()) {
				testdb.Unavailable(t, msg)
			}
			t.Fatalf("the starter could not start %s: %s", name, msg)
		}
		if _, err := fmt.Sscanf(line, "started %d %s", &pid, &dir); err == nil {
			break
		}
	}
	if pid == 0 {
		t.Fatalf("the starter never said which server it started: %v", lines.Err())
	}
	defer os.RemoveAll(dir)
	// A dead server is a zombie until its new parent, PID 1, reaps it,
	// which PID 1 may do seconds later or never: kill(pid, 0) would take
	// it for running. alive reads its state instead.
	if !alive(pid) {
		t.Fatalf("the server %d is not running before its starter is killed", pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the server %d still runs 10 s after its starter was killed", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The next Start removes the directory the killed starter left, and
	// no other: not one whose owner runs, nor one without an owner file.
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return false
	} else if err != nil {
		t.Fatalf("the killed starter's directory: %v", err)
	}
	ours, err := makeDir("dbprobe-redis-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ours)
	foreign, err := os.MkdirTemp("", "dbprobe-my-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(foreign)
	s, err := Start(context.Background(), Redis, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed starter's directory %s is still there after the next Start (%v)", dir, err)
	}
	for _, kept := range []string{ours, foreign, s.Dir()} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("Start removed %s: %v", kept, err)
		}
	}
	return true
}

func TestTempDirRemovesWhatDeadChecksLeft(t *testing.T) {
	// A directory whose owner file names a process that no longer runs:
	// this PID with another start time, as when a PID is used again.
	dead, err := os.MkdirTemp("", durabilityDirPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dead)
	if err := os.WriteFile(filepath.Join(dead, ownerFile), []byte(strconv.Itoa(os.Getpid())+" 0"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, "durability.db"), []byte("rows"), 0o644); err != nil {
		t.Fatal(err)
	}
	live, err := makeDir(durabilityDirPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(live)
	unowned, err := os.MkdirTemp("", durabilityDirPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(unowned)

	dir, err := TempDir()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if !strings.HasPrefix(filepath.Base(dir), durabilityDirPrefix) {
		t.Errorf("TempDir made %s, not a %s* directory", dir, durabilityDirPrefix)
	}
	if owner, err := os.ReadFile(filepath.Join(dir, ownerFile)); err != nil || string(owner) != processID(os.Getpid()) {
		t.Errorf("TempDir's owner file holds %q (%v), not this process", owner, err)
	}
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the directory of a dead owner %s is still there (%v)", dead, err)
	}
	for _, kept := range []string{live, unowned} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("TempDir removed %s: %v", kept, err)
		}
	}
}

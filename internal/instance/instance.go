package instance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Kind is the database server an instance runs.
type Kind int

// The kinds of server.
const (
	// Postgres is PostgreSQL.
	Postgres Kind = iota
	// MariaDB is MariaDB or MySQL: mariadbd or mysqld.
	MariaDB
	// Redis is redis-server, with an append-only file so that what it
	// acknowledged survives a restart.
	Redis
)

// String returns the name used on the command line.
func (k Kind) String() string {
	switch k {
	case Postgres:
		return "postgres"
	case MariaDB:
		return "mariadb"
	case Redis:
		return "redis"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// ErrNotInstalled is wrapped by Start's error when the server's binaries
// are missing; the message names the Debian package to install.
var ErrNotInstalled = errors.New("database server not installed")

// Options tunes Start.
type Options struct {
	// Bindir is the directory of the server binaries; "" finds them.
	Bindir string
	// Settings are extra server settings: postgresql.conf parameters for
	// PostgreSQL (synchronous_commit=off), [mysqld] options for MariaDB
	// (innodb_flush_log_at_trx_commit=2).
	Settings map[string]string
	// ReadyTimeout bounds each wait for the server to accept logins, crash
	// recovery included; 0 means 60 s.
	ReadyTimeout time.Duration
	// DataDir is where the server's data directory goes, e.g. on a small
	// file system a test filled on purpose; "" puts it in the temporary
	// directory. It must be absent or empty; Start makes it (for
	// PostgreSQL as root, owned by the postgres user) and Close removes it.
	DataDir string
	// InitArgs are extra arguments to initdb or mariadb-install-db, e.g.
	// --wal-segsize=1 for a PostgreSQL WAL that fits a small disk.
	InitArgs []string
	// Addr is the IP address the server listens on; "" is 127.0.0.1.
	Addr string
	// Netns names a network namespace (one of `ip netns list`, as root) to
	// run the server in, so that a test can cut or degrade the link to it;
	// Addr must then be an address of that namespace. "" runs it in this
	// process's namespace.
	Netns string
}

// Server is one running (or stopped) throwaway server.
type Server struct {
	kind     Kind
	dir      string // the temporary directory holding everything
	port     int
	password string
	version  string
	server   string // path of postgres or mariadbd
	args     []string
	cred     *syscall.Credential
	ready    time.Duration
	addr     string // the address the server listens on
	dataDir  string // the data directory
	netns    string // the network namespace it runs in, "" for this one

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	paused bool
	closed bool
}

// startAttempts is how many free ports Start tries: a port found free can
// be taken by someone else before the server binds it.
const startAttempts = 3

// Start initialises a new server in a temporary directory and starts it.
// The caller must Close it.
func Start(ctx context.Context, kind Kind, opts Options) (*Server, error) {
	if err := checkSettings(opts.Settings); err != nil {
		return nil, err
	}
	if err := checkPlacement(opts); err != nil {
		return nil, err
	}
	s := &Server{kind: kind, password: randomHex(16), ready: opts.ReadyTimeout, addr: opts.Addr, netns: opts.Netns}
	if s.ready <= 0 {
		s.ready = 60 * time.Second
	}
	if s.addr == "" {
		s.addr = "127.0.0.1"
	}
	removeOrphans()
	var err error
	switch kind {
	case Postgres:
		err = s.initPostgres(ctx, opts)
	case MariaDB:
		err = s.initMariaDB(ctx, opts)
	case Redis:
		err = s.initRedis(ctx, opts)
	default:
		return nil, fmt.Errorf("instance: unknown kind %d", int(kind))
	}
	if err != nil {
		s.removeFiles()
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		err = s.firstStart(ctx, opts)
		if err == nil {
			return s, nil
		}
		s.Kill()
		if attempt == startAttempts || ctx.Err() != nil {
			s.removeFiles()
			return nil, err
		}
	}
}

// firstStart picks a port, writes the configuration, starts the server
// and creates the dbprobe user and database.
func (s *Server) firstStart(ctx context.Context, opts Options) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	s.port = port
	args := s.args
	switch s.kind {
	case Postgres:
		err = s.configurePostgres(opts.Settings)
	case Redis:
		err = s.configureRedis(opts.Settings)
	default:
		err = s.configureMariaDB(opts.Settings)
		// The init file creates the dbprobe user while the server starts;
		// later starts go without it.
		args = append(append([]string(nil), s.args...), "--init-file="+filepath.Join(s.dir, "init.sql"))
	}
	if err != nil {
		return err
	}
	if err := s.launch(args); err != nil {
		return err
	}
	// PostgreSQL's first start still has to create the dbprobe database.
	return s.waitReady(ctx, s.kind == Postgres)
}

// checkPlacement refuses a data directory in use and an address that is
// not an IP address.
func checkPlacement(opts Options) error {
	if opts.Addr != "" && net.ParseIP(opts.Addr) == nil {
		return badinput.New("server address %q is not an IP address", opts.Addr)
	}
	if opts.Netns != "" && opts.Addr == "" {
		return badinput.New("a server in network namespace %s needs an address of that namespace to listen on", opts.Netns)
	}
	if opts.DataDir == "" {
		return nil
	}
	if !filepath.IsAbs(opts.DataDir) {
		return badinput.New("data directory %s is not an absolute path", opts.DataDir)
	}
	entries, err := os.ReadDir(opts.DataDir)
	if err == nil && len(entries) > 0 {
		return badinput.New("data directory %s is not empty", opts.DataDir)
	}
	return nil
}

// makeDataDir makes the data directory: Options.DataDir, or data in the
// temporary directory.
func (s *Server) makeDataDir(opts Options) error {
	s.dataDir = opts.DataDir
	if s.dataDir == "" {
		s.dataDir = filepath.Join(s.dir, "data")
	}
	if err := os.MkdirAll(s.dataDir, 0o700); err != nil {
		return fmt.Errorf("instance: data directory: %w", err)
	}
	if s.cred != nil {
		return os.Chown(s.dataDir, int(s.cred.Uid), int(s.cred.Gid))
	}
	return nil
}

// removeFiles removes the temporary directory and the data directory.
func (s *Server) removeFiles() error {
	var err error
	if s.dataDir != "" {
		err = os.RemoveAll(s.dataDir)
	}
	if s.dir != "" {
		if rerr := os.RemoveAll(s.dir); err == nil {
			err = rerr
		}
	}
	return err
}

// URL returns a dbprobe URL for the server, password included: never
// print it.
func (s *Server) URL() string {
	host := net.JoinHostPort(s.addr, strconv.Itoa(s.port))
	u := url.URL{User: url.UserPassword("dbprobe", s.password), Host: host, Path: "/dbprobe"}
	switch s.kind {
	case Postgres:
		u.Scheme = "postgres"
		u.RawQuery = "sslmode=disable"
	case Redis:
		// requirepass sets the password of Redis's default user.
		u.Scheme, u.User, u.Path = "redis", url.UserPassword("", s.password), "/0"
	default:
		u.Scheme = "mysql"
	}
	return u.String()
}

// Password returns the dbprobe user's password, for tests that look for it
// in what was printed.
func (s *Server) Password() string { return s.password }

// Kind returns the kind of server.
func (s *Server) Kind() Kind { return s.kind }

// Version returns the server's name and version, e.g. "PostgreSQL 15.18".
func (s *Server) Version() string { return s.version }

// Dir returns the temporary directory that holds the server's files,
// including its log (server.log).
func (s *Server) Dir() string { return s.dir }

// Port returns the TCP port the server listens on.
func (s *Server) Port() int { return s.port }

// Addr returns the IP address the server listens on: Options.Addr, or
// 127.0.0.1.
func (s *Server) Addr() string { return s.addr }

// DataDir returns the server's data directory.
func (s *Server) DataDir() string { return s.dataDir }

// launch starts the server process in a process group of its own.
func (s *Server) launch(args []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("instance: server is closed")
	}
	if s.running() {
		return errors.New("instance: server is still running; Kill or Stop it first")
	}
	logFile, err := os.OpenFile(filepath.Join(s.dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.server, args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Pdeathsig: the kernel kills the server when dbprobe dies, even by
	// SIGKILL, which leaves no code of dbprobe's to stop it; otherwise a
	// throwaway server would go on holding its port and memory. (The
	// signal goes when the thread that started the server ends; Go ends a
	// thread only under a goroutine that locked it, which dbprobe has not.)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cred, Pdeathsig: syscall.SIGKILL}
	if err := startIn(s.netns, cmd); err != nil {
		logFile.Close()
		return fmt.Errorf("instance: start %s: %w", s.server, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		logFile.Close()
		close(exited)
	}()
	s.cmd, s.exited, s.paused = cmd, exited, false
	return nil
}

// running reports whether the server's main process is alive; s.mu held.
func (s *Server) running() bool {
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// waitReady waits until the server accepts the dbprobe user's login, or
// exits, or the ready timeout passes. first is PostgreSQL's first start,
// which still has to create the dbprobe database.
func (s *Server) waitReady(parent context.Context, first bool) error {
	ctx, cancel := context.WithTimeout(parent, s.ready)
	defer cancel()
	s.mu.Lock()
	exited := s.exited
	s.mu.Unlock()
	var lastErr error
	for {
		select {
		case <-exited:
			return fmt.Errorf("instance: %s exited while starting: %s", s.kind, s.logTail())
		default:
		}
		attempt, cancelAttempt := context.WithTimeout(ctx, 5*time.Second)
		switch s.kind {
		case Postgres:
			lastErr = s.pingPostgres(attempt, first)
		case Redis:
			lastErr = s.pingRedis(attempt)
		default:
			lastErr = s.pingMariaDB(attempt)
		}
		cancelAttempt()
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				return fmt.Errorf("instance: %s: stopped waiting for it to accept logins: %w", s.kind, parent.Err())
			}
			return fmt.Errorf("instance: %s did not accept logins within %s (%s): %s", s.kind, s.ready, s.Scrub(lastErr), s.logTail())
		case <-exited:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logTail returns the last lines of the server's logs, for errors.
func (s *Server) logTail() string {
	var parts []string
	for _, name := range []string{"server.log", "stdout.log"} {
		b, err := os.ReadFile(filepath.Join(s.dir, name))
		if err != nil || len(b) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) > 8 {
			lines = lines[len(lines)-8:]
		}
		parts = append(parts, name+": "+strings.Join(lines, " | "))
	}
	if len(parts) == 0 {
		return "no server log"
	}
	return strings.Join(parts, "; ")
}

// Kill sends SIGKILL to every process of the server and waits until they
// are gone. The processes are frozen first and killed after, so that none
// sees another die and does anything (a WAL flush, a fork) on the way
// out. Killing a stopped server does nothing.
func (s *Server) Kill() error {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-exited:
		return nil // its PID may belong to someone else by now
	default:
	}
	pids := signalTree(cmd.Process.Pid, syscall.SIGSTOP)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	return waitGone(exited, pids, 10*time.Second)
}

// Stop shuts the server down cleanly (PostgreSQL's fast shutdown, MariaDB's
// normal one) and waits; a server that does not stop within a minute is
// killed.
func (s *Server) Stop() error {
	s.mu.Lock()
	cmd, exited, paused := s.cmd, s.exited, s.paused
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-exited:
		return nil
	default:
	}
	pids := processTree(cmd.Process.Pid)
	if paused {
		s.Resume()
	}
	sig := syscall.SIGTERM // MariaDB's and Redis's clean shutdown
	if s.kind == Postgres {
		sig = syscall.SIGINT // fast shutdown: ends sessions, checkpoints
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("instance: stop %s: %w", s.kind, err)
	}
	select {
	case <-exited:
		return waitGone(exited, pids, 10*time.Second)
	case <-time.After(time.Minute):
		if err := s.Kill(); err != nil {
			return err
		}
		return fmt.Errorf("instance: %s did not stop within a minute and was killed", s.kind)
	}
}

// Restart starts the server again on the same data directory and port,
// after Kill or Stop, and waits until it accepts logins (after crash
// recovery when it was killed).
func (s *Server) Restart(ctx context.Context) error {
	if err := s.launch(s.args); err != nil {
		return err
	}
	return s.waitReady(ctx, false)
}

// Pause freezes every process of the server with SIGSTOP: connections stay
// open and nothing answers.
func (s *Server) Pause() error { return s.signalGroup(syscall.SIGSTOP, true) }

// Resume lets a paused server go on with SIGCONT.
func (s *Server) Resume() error { return s.signalGroup(syscall.SIGCONT, false) }

func (s *Server) signalGroup(sig syscall.Signal, paused bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running() {
		return fmt.Errorf("instance: %s is not running", s.kind)
	}
	signalTree(s.cmd.Process.Pid, sig)
	s.paused = paused
	return nil
}

// Close stops the server (killing it if it does not stop) and removes
// every file it had. Later calls do nothing.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	stopErr := s.Stop()
	if stopErr != nil {
		if err := s.Kill(); err == nil {
			stopErr = nil
		}
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if err := s.removeFiles(); err != nil {
		return err
	}
	return stopErr
}

// waitGone waits until the main process was reaped and the others are
// dead. Orphaned backends are reparented to PID 1, which may never reap
// them, so zombies count as gone.
func waitGone(exited <-chan struct{}, pids []int, limit time.Duration) error {
	deadline := time.After(limit)
	select {
	case <-exited:
	case <-deadline:
		return fmt.Errorf("instance: the server process did not exit within %s", limit)
	}
	for _, pid := range pids {
		for alive(pid) {
			select {
			case <-deadline:
				return fmt.Errorf("instance: server process %d still alive after %s", pid, limit)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return nil
}

// signalTree sends sig to the server's main process, then to every
// process descended from it, and returns them all. PostgreSQL's backends
// each call setsid(), so a signal to the process group would miss them.
// The main process goes first so that, stopped, it forks no one the list
// misses.
func signalTree(root int, sig syscall.Signal) []int {
	syscall.Kill(root, sig)
	pids := processTree(root)
	for _, pid := range pids[1:] {
		syscall.Kill(pid, sig)
	}
	return pids
}

// processTree returns root and every live process descended from it, read
// from /proc.
func processTree(root int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, ppid, ok := procStat(pid)
		if !ok || state == "Z" || state == "X" {
			continue
		}
		children[ppid] = append(children[ppid], pid)
	}
	tree := []int{root}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != "Z" && state != "X"
}

// procStat reads a process's state and parent from /proc/PID/stat.
func procStat(pid int) (state string, ppid int, ok bool) {
	f, ok := procStatFields(pid)
	if !ok || len(f) < 2 {
		return "", 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0], ppid, true
}

// procStatFields returns the fields of /proc/PID/stat that follow the
// command name: state, ppid, pgrp, … (field 3 onwards).
func procStatFields(pid int) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	// The command name may hold spaces and parentheses: the fields after
	// it start after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(b[i+1:])), true
}

// ownerFile, in a server's temporary directory, names the process that
// made it: its PID and its start time (clock ticks after boot, field 22
// of /proc/PID/stat), which together tell a directory in use from one
// whose owner died, even once the PID is used again.
const ownerFile = "dbprobe-owner"

// dirPrefixes are the names of the temporary directories that hold
// throwaway databases: the servers' and the durability check's (TempDir).
var dirPrefixes = []string{"dbprobe-pg-", "dbprobe-my-", "dbprobe-redis-", durabilityDirPrefix}

// durabilityDirPrefix names the directories `dbprobe durability` keeps its
// SQLite database and client log in.
const durabilityDirPrefix = "dbprobe-durability-"

// TempDir makes a temporary directory for dbprobe's durability check that
// names this process as its owner, after removing the directories dead
// dbprobe processes left (see removeOrphans): a check killed with SIGKILL
// removes nothing itself, and its SQLite database may be large.
func TempDir() (string, error) {
	removeOrphans()
	return makeDir(durabilityDirPrefix)
}

// makeDir makes a server's temporary directory and writes its owner file.
func makeDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(processID(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// processID returns "PID STARTTIME" of a running process, "" when there
// is none.
func processID(pid int) string {
	f, ok := procStatFields(pid)
	if !ok || len(f) < 20 {
		return ""
	}
	return strconv.Itoa(pid) + " " + f[19]
}

// removeOrphans removes the temporary directories that servers of dead
// dbprobe processes left: the kernel kills a server with its dbprobe
// (Pdeathsig), but a dbprobe killed by SIGKILL removes nothing. A
// directory without an owner file, or whose owner still runs, is left
// alone.
func removeOrphans() {
	for _, prefix := range dirPrefixes {
		dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
		for _, dir := range dirs {
			if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
				continue // not a directory made here: a symbolic link stays
			}
			owner, err := os.ReadFile(filepath.Join(dir, ownerFile))
			if err != nil {
				continue
			}
			var pid int
			var start string
			if _, err := fmt.Sscanf(string(owner), "%d %s", &pid, &start); err != nil || pid <= 0 {
				continue
			}
			if processID(pid) == string(owner) {
				continue
			}
			os.RemoveAll(dir)
		}
	}
}

// freePort returns a TCP port on 127.0.0.1 that nothing listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("instance: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// checkSettings refuses settings that would break the configuration file.
func checkSettings(settings map[string]string) error {
	for k, v := range settings {
		if !settingName.MatchString(k) {
			return badinput.New("server setting %q is not a plain setting name", k)
		}
		if strings.ContainsAny(v, "\n\r") {
			return badinput.New("server setting %s has a line break in its value", k)
		}
	}
	return nil
}

// sortedSettings returns the settings in name order, so that files are
// written the same way every time.
func sortedSettings(settings map[string]string) []string {
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Scrub returns err's message for a report, with a library's words that
// hold the server's password withheld whole (see
// driver.Target.ScrubError); "no error" for nil.
func (s *Server) Scrub(err error) string {
	if err == nil {
		return "no error"
	}
	u, perr := url.Parse(s.URL())
	if perr != nil {
		u = nil
	}
	return driver.Target{URL: u, Password: s.password}.ScrubError(err)
}

// firstCommand returns the first name that is a command on PATH or an
// absolute path to an executable.
func firstCommand(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// executable reports whether path is an executable file.
func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// lookupCredential returns the credential of an OS user and its ids:
// PostgreSQL, started by root, runs as the postgres user.
func lookupCredential(name string) (*syscall.Credential, int, int, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, 0, 0, err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid, gid, nil
}

// chownTree gives a directory tree to uid:gid.
func chownTree(root string, uid, gid int) error {
	return filepath.Walk(root, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

// runSetup runs a setup command (initdb, mariadb-install-db) with the
// server's credential; its output goes to a log in the directory and, on
// failure, into the error.
func (s *Server) runSetup(ctx context.Context, logName string, path string, args ...string) error {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cred}
	out, err := cmd.CombinedOutput()
	os.WriteFile(filepath.Join(s.dir, logName), out, 0o644)
	if err != nil {
		text := strings.TrimSpace(string(out))
		if len(text) > 600 {
			text = "…" + text[len(text)-600:]
		}
		return fmt.Errorf("instance: %s failed (%v): %s", filepath.Base(path), err, text)
	}
	return nil
}

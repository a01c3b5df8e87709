package instance

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// postgresBindir finds the PostgreSQL server binaries: in dir when given,
// else the newest /usr/lib/postgresql/*/bin (pg_config --bindir may name
// the client's), else beside initdb on PATH.
func postgresBindir(dir string) (string, error) {
	has := func(d string) bool {
		return executable(filepath.Join(d, "postgres")) && executable(filepath.Join(d, "initdb"))
	}
	if dir != "" {
		if has(dir) {
			return dir, nil
		}
		return "", badinput.New("%w: no PostgreSQL server (postgres and initdb) in %s; install the Debian package postgresql or name the directory that holds them", ErrNotInstalled, dir)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && has(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
	}
	return "", badinput.New("%w: PostgreSQL server not found (no postgres and initdb in /usr/lib/postgresql/*/bin or on PATH); install the Debian package postgresql", ErrNotInstalled)
}

// versionOf returns the major version in /usr/lib/postgresql/N/bin.
func versionOf(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// initPostgres makes the directory and runs initdb.
func (s *Server) initPostgres(ctx context.Context, opts Options) error {
	bindir, err := postgresBindir(opts.Bindir)
	if err != nil {
		return err
	}
	s.server = filepath.Join(bindir, "postgres")
	out, err := exec.CommandContext(ctx, s.server, "--version").Output()
	if err != nil {
		return fmt.Errorf("instance: %s --version: %w", s.server, err)
	}
	// "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
	if f := strings.Fields(string(out)); len(f) >= 3 {
		s.version = "PostgreSQL " + f[2]
	}

	s.dir, err = makeDir("dbprobe-pg-")
	if err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		cred, uid, gid, err := lookupCredential("postgres")
		if err != nil {
			return badinput.New("running as root, and there is no 'postgres' OS user to run PostgreSQL as (it refuses to run as root): create it or run as a normal user")
		}
		s.cred = cred
		if err := os.Chown(s.dir, uid, gid); err != nil {
			return err
		}
	}
	pwfile := filepath.Join(s.dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(s.password+"\n"), 0o600); err != nil {
		return err
	}
	if s.cred != nil {
		if err := os.Chown(pwfile, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return err
		}
	}
	if err := s.makeDataDir(opts); err != nil {
		return err
	}
	data := s.dataDir
	// C locale: keys sort byte by byte, as in every database dbprobe drives.
	// --no-sync: initdb's own files are thrown away with the directory; the
	// server keeps fsync on, which a durability check depends on.
	args := append([]string{"-D", data, "-U", "dbprobe",
		"--pwfile=" + pwfile, "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"},
		opts.InitArgs...)
	err = s.runSetup(ctx, "initdb.log", filepath.Join(bindir, "initdb"), args...)
	os.Remove(pwfile)
	if err != nil {
		return err
	}
	if s.addr != "127.0.0.1" {
		// initdb lets password logins in from loopback only; a server on
		// another address takes them from its own subnets (a veth pair's).
		f, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString("host all all samenet scram-sha-256\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	s.args = []string{"-D", data}
	return nil
}

// configurePostgres writes the settings, port included, into a file the
// server's postgresql.conf includes.
func (s *Server) configurePostgres(settings map[string]string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "listen_addresses = '%s'\nport = %d\nunix_socket_directories = '%s'\n", quotePG(s.addr), s.port, quotePG(s.dir))
	// fsync stays on: without it no crash check means anything.
	b.WriteString("fsync = on\nmax_connections = 100\nlogging_collector = off\n")
	for _, k := range sortedSettings(settings) {
		fmt.Fprintf(&b, "%s = '%s'\n", k, quotePG(settings[k]))
	}
	conf := filepath.Join(s.dir, "dbprobe.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		return err
	}
	main := filepath.Join(s.dataDir, "postgresql.conf")
	text, err := os.ReadFile(main)
	if err != nil {
		return err
	}
	include := fmt.Sprintf("include = '%s'\n", quotePG(conf))
	if !strings.Contains(string(text), include) {
		f, err := os.OpenFile(main, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString(include)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if s.cred != nil {
		return os.Chown(conf, int(s.cred.Uid), int(s.cred.Gid))
	}
	return nil
}

func quotePG(v string) string { return strings.ReplaceAll(v, "'", "''") }

// pingPostgres logs in as dbprobe; on the first start it creates the
// dbprobe database through the postgres one.
func (s *Server) pingPostgres(ctx context.Context, first bool) error {
	u, err := url.Parse(s.URL())
	if err != nil {
		return err
	}
	if first {
		u.Path = "/postgres"
	}
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if !first {
		return conn.Ping(ctx)
	}
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'dbprobe')").Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE dbprobe"); err != nil {
			return err
		}
	}
	return nil
}

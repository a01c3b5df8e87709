package instance

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// mariadbBinaries finds the server (mariadbd or mysqld) and the program
// that initialises a data directory (mariadb-install-db or
// mysql_install_db): in dir when given (the installer also beside it in
// ../bin or on PATH, as Debian splits them between /usr/sbin and /usr/bin),
// else on PATH or in /usr/sbin.
func mariadbBinaries(dir string) (server, installDB string, err error) {
	installers := []string{"mariadb-install-db", "mysql_install_db"}
	if dir != "" {
		server = firstCommand(filepath.Join(dir, "mariadbd"), filepath.Join(dir, "mysqld"))
		var names []string
		for _, n := range installers {
			names = append(names, filepath.Join(dir, n), filepath.Join(dir, "..", "bin", n))
		}
		installDB = firstCommand(append(names, installers...)...)
		if server == "" || installDB == "" {
			return "", "", badinput.New("%w: no MariaDB server (mariadbd or mysqld, and mariadb-install-db) in %s; install the Debian package mariadb-server or name the directory that holds them", ErrNotInstalled, dir)
		}
		return server, installDB, nil
	}
	server = firstCommand("mariadbd", "mysqld", "/usr/sbin/mariadbd", "/usr/sbin/mysqld")
	installDB = firstCommand(installers...)
	if server == "" || installDB == "" {
		return "", "", badinput.New("%w: MariaDB server not found (no mariadbd or mysqld and mariadb-install-db on PATH or in /usr/sbin); install the Debian package mariadb-server", ErrNotInstalled)
	}
	return server, installDB, nil
}

// initMariaDB makes the directory and initialises the data directory.
func (s *Server) initMariaDB(ctx context.Context, opts Options) error {
	server, installDB, err := mariadbBinaries(opts.Bindir)
	if err != nil {
		return err
	}
	s.server = server
	out, err := exec.CommandContext(ctx, server, "--version").Output()
	if err != nil {
		return fmt.Errorf("instance: %s --version: %w", server, err)
	}
	s.version = mariadbVersion(string(out))

	s.dir, err = makeDir("dbprobe-my-")
	if err != nil {
		return err
	}
	if err := s.makeDataDir(opts); err != nil {
		return err
	}
	// The configuration is written before the port is known: the installer
	// needs the paths, not the port. firstStart rewrites it.
	if err := s.configureMariaDB(opts.Settings); err != nil {
		return err
	}
	args := append([]string{"--defaults-file=" + s.myCnf(), "--user=" + currentUser(),
		"--auth-root-authentication-method=socket", "--skip-test-db"}, opts.InitArgs...)
	if err := s.runSetup(ctx, "install.log", installDB, args...); err != nil {
		return err
	}
	// The password is made of hex digits: nothing to escape.
	init := fmt.Sprintf(`CREATE DATABASE IF NOT EXISTS dbprobe;
CREATE USER IF NOT EXISTS 'dbprobe'@'127.0.0.1' IDENTIFIED BY '%[1]s';
CREATE USER IF NOT EXISTS 'dbprobe'@'localhost' IDENTIFIED BY '%[1]s';
GRANT ALL PRIVILEGES ON *.* TO 'dbprobe'@'127.0.0.1' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO 'dbprobe'@'localhost' WITH GRANT OPTION;
`, s.password)
	if s.addr != "127.0.0.1" {
		// Clients of a server on another address (in a network namespace)
		// come from elsewhere than loopback.
		init += fmt.Sprintf("CREATE USER IF NOT EXISTS 'dbprobe'@'%%' IDENTIFIED BY '%s';\nGRANT ALL PRIVILEGES ON *.* TO 'dbprobe'@'%%' WITH GRANT OPTION;\n", s.password)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "init.sql"), []byte(init), 0o600); err != nil {
		return err
	}
	s.args = []string{"--defaults-file=" + s.myCnf()}
	return nil
}

// mariadbVersion turns "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for …"
// into "MariaDB 10.11.19".
func mariadbVersion(out string) string {
	f := strings.Fields(out)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "Ver" {
			v := f[i+1]
			name := "MySQL"
			if strings.Contains(v, "MariaDB") {
				name = "MariaDB"
			}
			if j := strings.Index(v, "-"); j > 0 {
				v = v[:j]
			}
			return name + " " + v
		}
	}
	return strings.TrimSpace(out)
}

func (s *Server) myCnf() string { return filepath.Join(s.dir, "my.cnf") }

// currentUser is the OS user the server runs as: MariaDB refuses root
// unless told --user=root.
func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return strconv.Itoa(os.Geteuid())
}

// configureMariaDB writes my.cnf; the server reads nothing else
// (--defaults-file), so nothing from /etc/mysql applies.
func (s *Server) configureMariaDB(settings map[string]string) error {
	var b strings.Builder
	b.WriteString("[mysqld]\n")
	fmt.Fprintf(&b, "user = %s\ndatadir = %s\nsocket = %s\npid-file = %s\nlog-error = %s\n",
		currentUser(), s.dataDir, filepath.Join(s.dir, "mysqld.sock"),
		filepath.Join(s.dir, "mysqld.pid"), filepath.Join(s.dir, "server.log"))
	if s.port != 0 {
		fmt.Fprintf(&b, "port = %d\n", s.port)
	} else {
		b.WriteString("skip-networking\n")
	}
	// Durability stays full unless a setting says otherwise (later lines
	// win); the buffer pool is small because the machine may be shared.
	fmt.Fprintf(&b, "bind-address = %s\n", s.addr)
	b.WriteString("skip-name-resolve\nmax_connections = 100\n" +
		"innodb_buffer_pool_size = 64M\ninnodb_flush_log_at_trx_commit = 1\n")
	for _, k := range sortedSettings(settings) {
		fmt.Fprintf(&b, "%s = %s\n", k, settings[k])
	}
	return os.WriteFile(s.myCnf(), []byte(b.String()), 0o644)
}

// pingMariaDB logs in as dbprobe over TCP.
func (s *Server) pingMariaDB(ctx context.Context) error {
	cfg := mysql.NewConfig()
	cfg.User = "dbprobe"
	cfg.Passwd = s.password
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort(s.addr, strconv.Itoa(s.port))
	cfg.DBName = "dbprobe"
	cfg.Timeout = 2 * time.Second
	// A server still starting drops connections; the driver would log each.
	cfg.Logger = quietLogger{}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	return db.PingContext(ctx)
}

// quietLogger drops go-sql-driver's log lines.
type quietLogger struct{}

func (quietLogger) Print(...any) {}

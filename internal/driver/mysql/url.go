package mysql

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// defaultPort is MySQL's and MariaDB's port.
const defaultPort = "3306"

// connectTimeout bounds how long opening one connection may take when the
// URL sets no timeout, so that an unreachable host fails in bounded time
// rather than after the kernel's TCP retries (minutes).
const connectTimeout = 10 * time.Second

// urlExample is the form every URL mistake points to.
const urlExample = "mysql://user@host:3306/database"

// option is one URL option dbprobe understands: how to check its value and
// what to do with it.
type option struct {
	// apply checks the value and stores it in the settings; the error is
	// the reason, finished into one line by the caller.
	apply func(s *settings, value string) error
	// about says what the option does, for the list of known options.
	about string
}

// options are the URL options, by name. Anything else is refused with the
// list, so that a misspelt option is never silently ignored.
var options = map[string]option{
	"tls": {about: "true, false, skip-verify or preferred", apply: func(s *settings, v string) error {
		switch v {
		case "true", "false", "skip-verify", "preferred":
			s.cfg.TLSConfig = v
			return nil
		}
		return errors.New("is not one of them")
	}},
	"timeout": {about: "connect timeout, e.g. 5s", apply: func(s *settings, v string) error {
		d, err := parseDuration(v)
		s.cfg.Timeout = d
		return err
	}},
	"read_timeout": {about: "socket read timeout, e.g. 30s", apply: func(s *settings, v string) error {
		d, err := parseDuration(v)
		s.cfg.ReadTimeout = d
		return err
	}},
	"write_timeout": {about: "socket write timeout, e.g. 30s", apply: func(s *settings, v string) error {
		d, err := parseDuration(v)
		s.cfg.WriteTimeout = d
		return err
	}},
	"innodb_lock_wait_timeout": {about: "seconds a row lock is waited for (session variable)", apply: func(s *settings, v string) error {
		return s.sessionInt("innodb_lock_wait_timeout", v, 1, 1<<30)
	}},
	"lock_wait_timeout": {about: "seconds a metadata or table lock is waited for (session variable)", apply: func(s *settings, v string) error {
		return s.sessionInt("lock_wait_timeout", v, 1, 31536000)
	}},
	"max_statement_time": {about: "MariaDB statement timeout in seconds (session variable)", apply: func(s *settings, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > 31536000 {
			return errors.New("must be a number of seconds between 0 and 31536000")
		}
		s.cfg.Params["max_statement_time"] = strconv.FormatFloat(f, 'f', -1, 64)
		return nil
	}},
	"max_execution_time": {about: "MySQL statement timeout in milliseconds (session variable)", apply: func(s *settings, v string) error {
		return s.sessionInt("max_execution_time", v, 0, math.MaxUint32)
	}},
	"max_heap_table_size": {about: "largest ENGINE=MEMORY table in bytes (K, M, G suffixes)", apply: func(s *settings, v string) error {
		n, err := parseSize(v)
		if err != nil || n < 16384 {
			return errors.New("must be a size of at least 16384 bytes, e.g. 4G")
		}
		s.maxHeapTableSize = n
		return nil
	}},
	// The password may be given as an option, as other tools accept it;
	// driver.ParseTarget has taken it into Target.Password already.
	"password": {about: "the password (prefer DBPROBE_PASSWORD)", apply: func(*settings, string) error { return nil }},
}

// knownOptions lists the option names, sorted, for messages.
func knownOptions() string {
	names := make([]string, 0, len(options))
	for n := range options {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// settings is what a URL says: go-sql-driver's configuration, and the
// choices dbprobe makes itself.
type settings struct {
	cfg *gomysql.Config
	// maxHeapTableSize is the session's max_heap_table_size when creating
	// an ENGINE=MEMORY table; 0 raises it as far as the server allows.
	maxHeapTableSize uint64
	// tls is the effective TLS mode, for Info.
	tls string
}

// tlsFix says how to get verified TLS from MySQL, for the refusal of
// anything weaker off loopback.
const tlsFix = "set tls=true in the URL (the server's certificate must come from an authority this machine trusts)"

// tlsLevel is what go-sql-driver's tls value protects: true verifies the
// chain and the host name, skip-verify neither, preferred falls back to
// plain text, false and no value send plain text.
func tlsLevel(value string) driver.TLSLevel {
	switch value {
	case "true":
		return driver.TLSVerifyFull
	case "skip-verify":
		return driver.TLSRequire
	case "preferred":
		return driver.TLSPreferred
	}
	return driver.TLSOff
}

// sessionInt sets an integer session variable on every connection.
func (s *settings) sessionInt(name, v string, lo, hi uint64) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return fmt.Errorf("must be a whole number between %d and %d", lo, hi)
	}
	s.cfg.Params[name] = strconv.FormatUint(n, 10)
	return nil
}

// parseDuration reads a Go duration (5s, 1m30s) or a bare number of
// seconds, as MySQL's own clients take their timeouts.
func parseDuration(v string) (time.Duration, error) {
	if n, err := strconv.ParseUint(v, 10, 32); err == nil && n > 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > 24*time.Hour {
		return 0, errors.New("must be a duration such as 5s, or a number of seconds, up to 24h")
	}
	return d, nil
}

// parseSize reads a byte count with an optional K, M or G suffix (powers of
// 1024), as MySQL's option files write sizes.
func parseSize(v string) (uint64, error) {
	mult := uint64(1)
	if v != "" {
		switch v[len(v)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			v = v[:len(v)-1]
		}
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > math.MaxUint64/mult {
		return 0, errors.New("not a size")
	}
	return n * mult, nil
}

// parseURL turns a mysql:// or mariadb:// target into go-sql-driver's
// configuration. Every mistake is a badinput error that names the URL
// without its password.
func parseURL(target driver.Target) (*settings, error) {
	u := target.URL
	if u == nil {
		return nil, badinput.New("no MySQL URL; give one such as %s", urlExample)
	}
	shown := target.Redacted()
	if u.Opaque != "" || u.Host == "" && u.User == nil {
		return nil, badinput.New("--db %s: write a MySQL URL as %s", shown, urlExample)
	}
	user := u.User.Username()
	if user == "" {
		return nil, badinput.New("--db %s names no user; write it as %s", shown, urlExample)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "127.0.0.1"
	}
	if port == "" {
		if strings.HasSuffix(u.Host, ":") {
			return nil, badinput.New("--db %s has an empty port; write it as %s, or leave out :port for %s", shown, urlExample, defaultPort)
		}
		port = defaultPort
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, badinput.New("--db %s: port %q is not a number from 1 to 65535", shown, port)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	switch {
	case dbName == "":
		return nil, badinput.New("--db %s names no database; write it as %s", shown, urlExample)
	case strings.Contains(dbName, "/"):
		return nil, badinput.New("--db %s: database %q holds a /; write the URL as %s", shown, dbName, urlExample)
	case len(dbName) > 64:
		return nil, badinput.New("--db %s: database name %q is longer than MySQL's 64 characters", shown, dbName)
	}
	if u.Fragment != "" {
		return nil, badinput.New("--db %s has a #fragment; MySQL URLs have none (escape # in a password as %%23)", shown)
	}

	cfg := gomysql.NewConfig()
	cfg.User = user
	cfg.Passwd = target.Password
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort(host, port)
	cfg.DBName = dbName
	cfg.Timeout = connectTimeout
	// Affected rows count the rows an UPDATE matched, not those it changed:
	// an update that writes the values a row already holds found its row,
	// and must not be reported as ErrNotFound.
	cfg.ClientFoundRows = true
	cfg.Params = map[string]string{}
	cfg.Logger = slogLogger{}
	s := &settings{cfg: cfg}

	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, badinput.New("--db %s: the options after ? do not parse (%s); write them as ?name=value&name=value", shown, describeQueryError(err))
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names) // the first mistake reported is the same every time
	for _, name := range names {
		opt, ok := options[name]
		if !ok {
			return nil, badinput.New("--db %s: unknown option %q; known: %s", shown, name, knownOptions())
		}
		values := q[name]
		if len(values) > 1 {
			return nil, badinput.New("--db %s: option %s is given %d times; give it once", shown, name, len(values))
		}
		if err := opt.apply(s, values[0]); err != nil {
			return nil, badinput.New("--db %s: option %s=%q %v (%s)", shown, name, values[0], err, opt.about)
		}
	}
	if _, chosen := q["tls"]; !chosen && !driver.IsLoopback(host) {
		// go-sql-driver's default is plain text; off loopback dbprobe's
		// is verified TLS.
		s.cfg.TLSConfig = "true"
	}
	if s.tls, err = target.CheckTLS([]driver.TLSRoute{{Host: host, Level: tlsLevel(s.cfg.TLSConfig)}}, tlsFix); err != nil {
		return nil, err
	}
	return s, nil
}

// describeQueryError returns url.ParseQuery's complaint without the text it
// quotes, which may hold part of a password.
func describeQueryError(err error) string {
	var esc url.EscapeError
	if errors.As(err, &esc) {
		return "a malformed %-escape"
	}
	return err.Error()
}

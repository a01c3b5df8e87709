package postgres

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/rawnet"
)

// urlForm is how a PostgreSQL URL is written, for messages.
const urlForm = "postgres://user@host:5432/database"

// tlsFix says how to get verified TLS from PostgreSQL, for the refusal of
// anything weaker off loopback.
const tlsFix = "set sslmode=verify-full in the URL (with sslrootcert=FILE for a private certificate authority)"

// poolConfig parses the target's URL into pgx's configuration and settles
// TLS: to a host that is not loopback, a URL that names no sslmode gets
// sslmode=verify-full rather than libpq's default prefer, and an explicit
// weaker mode needs target.AllowInsecureTLS. It returns the effective TLS
// mode for Info. Errors are bad input and never hold the password.
func poolConfig(target driver.Target) (*pgxpool.Config, string, error) {
	if target.URL == nil {
		return nil, "", badinput.New("no PostgreSQL URL; give one such as %s", urlForm)
	}
	cfg, err := parseConfig(target, target.URL)
	if err != nil {
		return nil, "", err
	}
	if !sslModeChosen(target.URL) && !allLoopback(tlsRoutes(&cfg.ConnConfig.Config)) {
		u := *target.URL
		if u.RawQuery != "" {
			u.RawQuery += "&"
		}
		u.RawQuery += "sslmode=verify-full"
		if cfg, err = parseConfig(target, &u); err != nil {
			return nil, "", err
		}
	}
	// The decision rests on the configuration pgx built, not on the URL's
	// words: PGSSLMODE, a service file, ssl=true and sslrootcert=system all
	// change the mode too.
	mode, err := target.CheckTLS(tlsRoutes(&cfg.ConnConfig.Config), tlsFix)
	if err != nil {
		return nil, "", err
	}
	return cfg, mode, nil
}

func parseConfig(target driver.Target, u *url.URL) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		return nil, badinput.New("--db %s is not a valid PostgreSQL URL: %w; write it as %s",
			target.Redacted(), &driver.Scrubbed{Msg: target.Scrub(parseReason(err)), Err: err}, urlForm)
	}
	// Sockets with raw reads and writes (see rawnet), under TLS when the
	// URL asks for it.
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return rawnet.Wrap(c), nil
	}
	return cfg, nil
}

// sslModeChosen reports whether the user chose an sslmode, in the URL
// (sslmode=, or ssl=true as pgx also reads it) or in PGSSLMODE.
func sslModeChosen(u *url.URL) bool {
	q := u.Query()
	return q.Has("sslmode") || q.Has("ssl") || os.Getenv("PGSSLMODE") != ""
}

// tlsRoutes lists each host pgx may connect to, with the weakest TLS it
// may end up with there: libpq's allow and prefer become a TLS attempt and
// a plain-text fallback for the same host.
func tlsRoutes(cc *pgconn.Config) []driver.TLSRoute {
	type seen struct{ plain, encrypted bool }
	var order []string
	hosts := map[string]*seen{}
	levels := map[string]driver.TLSLevel{}
	add := func(host string, c *tls.Config) {
		s, ok := hosts[host]
		if !ok {
			s = &seen{}
			hosts[host] = s
			order = append(order, host)
			levels[host] = driver.TLSVerifyFull
		}
		if c == nil {
			s.plain = true
			return
		}
		s.encrypted = true
		levels[host] = min(levels[host], tlsConfigLevel(c))
	}
	add(cc.Host, cc.TLSConfig)
	for _, fb := range cc.Fallbacks {
		add(fb.Host, fb.TLSConfig)
	}
	routes := make([]driver.TLSRoute, 0, len(order))
	for _, h := range order {
		level := levels[h]
		switch s := hosts[h]; {
		case s.plain && s.encrypted:
			level = driver.TLSPreferred
		case s.plain:
			level = driver.TLSOff
		}
		routes = append(routes, driver.TLSRoute{Host: h, Level: level})
	}
	return routes
}

// tlsConfigLevel reads what pgx's TLS configuration checks: verify-ca
// verifies the chain itself and skips Go's check, which would also compare
// the host name; require skips both.
func tlsConfigLevel(c *tls.Config) driver.TLSLevel {
	switch {
	case !c.InsecureSkipVerify:
		return driver.TLSVerifyFull
	case c.VerifyPeerCertificate != nil:
		return driver.TLSVerifyCA
	}
	return driver.TLSRequire
}

func allLoopback(routes []driver.TLSRoute) bool {
	for _, r := range routes {
		if !driver.IsLoopback(r.Host) {
			return false
		}
	}
	return true
}

// parseReason returns why pgx could not parse a connection string, without
// the string itself.
func parseReason(err error) string {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		msg := pe.Error()
		if i := strings.LastIndex(msg, "`: "); i >= 0 {
			return msg[i+3:]
		}
	}
	return driver.LastPart(err.Error())
}

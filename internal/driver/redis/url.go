package redis

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/rawnet"
)

// dialTimeout bounds how long opening one connection may take when the URL
// sets no dial_timeout, so that an unreachable host fails in bounded time.
const dialTimeout = 10 * time.Second

// poolTimeout is how long a call waits for a connection of the DB's pool
// when every one is busy and the URL sets no pool_timeout; the pool is
// sized so that this does not happen in a run (go-redis's default, which
// dbprobe used before redigo).
const poolTimeout = 4 * time.Second

// idleTimeout closes a pooled connection left idle this long when the URL
// sets no conn_max_idle_time: longer than any pause of a run, shorter than
// the timeouts of the proxies in front of managed servers.
const idleTimeout = 30 * time.Minute

// urlForm is how a Redis URL is written, for error messages.
const urlForm = "redis://[user:password@]host:6379/0 (rediss:// for TLS)"

// tlsFix says how to get verified TLS from Redis, for the refusal of
// anything weaker off loopback. The scheme is the user's choice to make:
// a redis:// URL is never turned into rediss://, since many servers have
// no TLS port at all.
const tlsFix = "use rediss:// without skip_verify (the server's certificate must come from an authority this machine trusts)"

// options is how dbprobe connects to one Redis server: what the URL says,
// with dbprobe's defaults for what it leaves out.
type options struct {
	addr           string // host:port
	user, password string
	db             int
	tls            *tls.Config // nil for redis://
	clientName     string
	// dialTimeout bounds opening a connection: the dial, the TLS
	// handshake and the AUTH, CLIENT SETNAME and SELECT after it; 0 none.
	dialTimeout time.Duration
	// readTimeout and writeTimeout are per-command socket deadlines, set
	// only when the URL asks for them; 0 none.
	readTimeout, writeTimeout time.Duration
	poolSize                  int
	poolTimeout               time.Duration // 0: wait as long as the call's context allows
	maxIdle                   int
	idleTimeout               time.Duration // 0: idle connections stay open
	maxConnAge                time.Duration // 0: no limit
}

// tlsLevel is what the TLS configuration protects: none for redis://,
// verified for rediss://, unverified with skip_verify=true.
func tlsLevel(o *options) driver.TLSLevel {
	switch {
	case o.tls == nil:
		return driver.TLSOff
	case o.tls.InsecureSkipVerify:
		return driver.TLSRequire
	}
	return driver.TLSVerifyFull
}

// acceptedOptions are the query options a Redis URL may hold. They are
// the options of go-redis's URLs that redigo can honour, under the same
// names, so that a URL written for dbprobe before it moved to redigo
// still works.
var acceptedOptions = []string{
	"db", "protocol", "client_name", "dial_timeout", "read_timeout", "write_timeout",
	"pool_size", "pool_timeout", "max_idle_conns", "conn_max_idle_time", "idle_timeout",
	"conn_max_lifetime", "max_conn_age", "max_retries", "skip_verify",
}

// withoutEffect are go-redis's URL options that tune what redigo does not
// have (retry backoff, a FIFO pool, pipelining pools, connections kept
// open in advance). They are refused by name rather than ignored, so that
// nobody believes a setting took effect.
var withoutEffect = []string{
	"min_retry_backoff", "max_retry_backoff", "pool_fifo", "min_idle_conns", "max_active_conns",
	"max_concurrent_dials", "pipeline_pool_size", "pipeline_read_buffer_size",
	"pipeline_write_buffer_size", "conn_max_lifetime_jitter",
}

// query reads a URL's query options, as go-redis's ParseURL did: the last
// value of an option counts, an empty one is as good as none, and the
// first malformed value is the error.
type query struct {
	q   url.Values
	err error
}

// take returns an option's value and marks it read.
func (q *query) take(name string) string {
	vs := q.q[name]
	delete(q.q, name)
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

func (q *query) int(name string) (int, bool) {
	s := q.take(name)
	if s == "" {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	if err != nil {
		q.fail(fmt.Errorf("invalid %s number: %w", name, err))
		return 0, false
	}
	return i, true
}

// duration reads whole seconds or a Go duration; zero or less turns the
// timeout off (0).
func (q *query) duration(name string) (time.Duration, bool) {
	s := q.take(name)
	if s == "" {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if i, ierr := strconv.Atoi(s); ierr == nil {
		d, err = time.Duration(i)*time.Second, nil
	}
	if err != nil {
		q.fail(fmt.Errorf("invalid %s duration: %w", name, err))
		return 0, false
	}
	return max(d, 0), true
}

func (q *query) bool(name string) bool {
	switch s := q.take(name); s {
	case "true", "1":
		return true
	case "false", "0", "":
		return false
	default:
		q.fail(fmt.Errorf("invalid %s boolean: expected true/false/1/0 or an empty string, got %q", name, s))
		return false
	}
}

func (q *query) fail(err error) {
	if q.err == nil {
		q.err = err
	}
}

// parseURL reads a redis:// or rediss:// URL into options, with the error
// messages go-redis gave for the same mistakes. Defaults are left to
// clientOptions.
func parseURL(u *url.URL) (*options, bool, error) {
	o := &options{user: u.User.Username()}
	o.password, _ = u.User.Password()
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "6379"
	}
	o.addr = net.JoinHostPort(host, port)
	switch f := strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' }); len(f) {
	case 0:
	case 1:
		db, err := strconv.Atoi(f[0])
		if err != nil {
			return nil, false, fmt.Errorf("invalid database number: %q", f[0])
		}
		o.db = db
	default:
		return nil, false, fmt.Errorf("invalid URL path: %s", u.Path)
	}
	if u.Scheme == "rediss" {
		o.tls = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	}

	q := query{q: u.Query()}
	if s := q.take("db"); s != "" {
		db, err := strconv.Atoi(s)
		if err != nil {
			return nil, false, fmt.Errorf("invalid database number: %w", err)
		}
		o.db = db
	}
	protocol, _ := q.int("protocol")
	o.clientName = q.take("client_name")
	retries, _ := q.int("max_retries")
	var set bool
	o.dialTimeout, set = q.duration("dial_timeout")
	if !set {
		o.dialTimeout = dialTimeout
	}
	o.readTimeout, _ = q.duration("read_timeout")
	o.writeTimeout, _ = q.duration("write_timeout")
	var poolSet bool
	o.poolSize, poolSet = q.int("pool_size")
	if o.poolTimeout, set = q.duration("pool_timeout"); !set {
		o.poolTimeout = poolTimeout
	}
	maxIdle, idleSet := q.int("max_idle_conns")
	idleName := "conn_max_idle_time"
	if len(q.q[idleName]) == 0 {
		idleName = "idle_timeout"
	}
	if o.idleTimeout, set = q.duration(idleName); !set {
		o.idleTimeout = idleTimeout
	}
	ageName := "conn_max_lifetime"
	if len(q.q[ageName]) == 0 {
		ageName = "max_conn_age"
	}
	o.maxConnAge, _ = q.duration(ageName)
	if o.tls != nil && len(q.q["skip_verify"]) > 0 {
		o.tls.InsecureSkipVerify = q.bool("skip_verify")
	}
	var noEffect []string
	for _, name := range withoutEffect {
		if len(q.q[name]) > 0 {
			noEffect = append(noEffect, name)
			q.take(name)
		}
	}
	if q.err != nil {
		return nil, false, q.err
	}
	if len(q.q) > 0 {
		left := slices.Sorted(func(yield func(string) bool) {
			for k := range q.q {
				if !yield(k) {
					return
				}
			}
		})
		return nil, false, fmt.Errorf("unexpected option: %s", strings.Join(left, ", "))
	}

	// What parses but cannot be honoured is bad input of dbprobe's own.
	switch {
	case len(noEffect) > 0:
		return nil, true, fmt.Errorf("%s: go-redis options that dbprobe's Redis client (redigo) has no counterpart for; remove them (the options are %s)",
			strings.Join(noEffect, ", "), strings.Join(acceptedOptions, ", "))
	case protocol != 0 && protocol != 2:
		return nil, true, fmt.Errorf("protocol=%d: dbprobe speaks RESP2 to Redis, which every server understands and which carries everything it measures; give protocol=2 or leave it out", protocol)
	case retries > 0:
		return nil, true, fmt.Errorf("max_retries=%d: dbprobe never repeats a Redis command itself (a benchmark counts what happened, and an insert script repeated after a lost reply would report its own record as a duplicate); leave it out", retries)
	case poolSet && o.poolSize < 1:
		return nil, true, fmt.Errorf("pool_size=%d: give 1 or more connections, or leave it out (one per session and two more)", o.poolSize)
	case idleSet && maxIdle < 0:
		return nil, true, fmt.Errorf("max_idle_conns=%d: give 0 or more", maxIdle)
	}
	o.maxIdle = -1
	if idleSet {
		o.maxIdle = maxIdle
	}
	return o, false, nil
}

// clientOptions turns a target into connection options: the URL through
// parseURL, the password from the target when the URL carries none, and
// dbprobe's defaults for what the URL does not set. It returns the
// effective TLS mode for Info: plain redis:// to a host that is not
// loopback needs target.AllowInsecureTLS. Errors are badinput and never
// hold the password.
func clientOptions(target driver.Target, sessions int) (*options, string, error) {
	if target.URL == nil {
		return nil, "", badinput.New("no Redis URL; give one such as redis://:PASSWORD@127.0.0.1:6379/0")
	}
	u := *target.URL
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, "", badinput.New("--db %s: the Redis driver takes redis:// or rediss:// URLs; write it as %s", target.Redacted(), urlForm)
	}
	if u.Opaque != "" {
		return nil, "", badinput.New("--db %s has no host; write it as %s", target.Redacted(), urlForm)
	}
	// A password given as ?password=… (driver.ParseTarget took it into
	// target.Password) is not a URL option.
	q := u.Query()
	for k := range q {
		if strings.EqualFold(k, "password") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	opts, ours, err := parseURL(&u)
	switch {
	case err != nil && ours:
		return nil, "", badinput.New("--db %s: %w", target.Redacted(), &driver.Scrubbed{Msg: target.Scrub(err.Error()), Err: err})
	case err != nil:
		return nil, "", badinput.New("--db %s is not a valid Redis URL: %w; write it as %s",
			target.Redacted(), &driver.Scrubbed{Msg: target.Scrub(err.Error()), Err: err}, urlForm)
	}
	if opts.db < 0 {
		return nil, "", badinput.New("--db %s names database %d; Redis databases are numbered from 0: write it as %s", target.Redacted(), opts.db, urlForm)
	}
	host, _, err := net.SplitHostPort(opts.addr)
	if err != nil {
		host = opts.addr
	}
	mode, err := target.CheckTLS([]driver.TLSRoute{{Host: host, Level: tlsLevel(opts)}}, tlsFix)
	if err != nil {
		return nil, "", err
	}
	if opts.password == "" && target.Password != "" {
		opts.password = target.Password
	}
	if opts.poolSize == 0 {
		// Every session may hold a connection at once; the DB's own calls
		// (Inspect, CONFIG) need one or two more.
		opts.poolSize = max(sessions, 1) + 2
	}
	if opts.maxIdle < 0 {
		opts.maxIdle = opts.poolSize
	}
	if opts.clientName == "" {
		opts.clientName = "dbprobe"
	}
	return opts, mode, nil
}

// dialSocket dials addr over TCP with raw reads and writes (see rawnet),
// under TLS when the URL asks, the handshake bounded by ctx.
func (o *options) dialSocket(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{KeepAlive: 5 * time.Minute}
	sock, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	conn := rawnet.Wrap(sock)
	if o.tls != nil {
		tc := tls.Client(conn, o.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			sock.Close()
			return nil, err
		}
		conn = tc
	}
	return &writeBatcher{Conn: conn}, nil
}

// writeBuffer is how many bytes writeBatcher gathers before it sends
// them: go-redis's write buffer, 32 KiB.
const writeBuffer = 32 << 10

// writeBatcher gathers what redigo writes to a connection, sending it
// when writeBuffer bytes are waiting and before every read, which redigo
// makes after each command or pipeline it has written. redigo's own
// buffer is 4 KiB: a load batch of 1,000 records (1.1 MB) went out in
// 270 writes, each one more wake-up of the server, and dbprobe load on
// Redis ran at 11,000 rows/s against go-redis's 15,000 (bench/RESULTS.md,
// issue 18). A single command is one write, as before. It is not safe for
// concurrent use, as redigo's connections are not; Close may come from
// another goroutine.
type writeBatcher struct {
	net.Conn
	buf []byte
}

func (c *writeBatcher) Write(p []byte) (int, error) {
	if len(c.buf) > 0 && len(c.buf)+len(p) > writeBuffer {
		if err := c.flush(); err != nil {
			return 0, err
		}
	}
	if len(p) >= writeBuffer {
		return c.Conn.Write(p)
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// Read sends what is waiting, then reads.
func (c *writeBatcher) Read(p []byte) (int, error) {
	if len(c.buf) > 0 {
		if err := c.flush(); err != nil {
			return 0, err
		}
	}
	return c.Conn.Read(p)
}

func (c *writeBatcher) flush() error {
	_, err := c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// dial opens a connection ready for commands: the socket, then AUTH,
// CLIENT SETNAME and SELECT, all within dialTimeout. keep, unless nil,
// is handed the socket, for the caller to close it from another
// goroutine.
func (o *options) dial(ctx context.Context, keep func(net.Conn)) (redis.Conn, error) {
	if o.dialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.dialTimeout)
		defer cancel()
	}
	return redis.DialContext(ctx, "tcp", o.addr,
		redis.DialContextFunc(func(ctx context.Context, network, addr string) (net.Conn, error) {
			sock, err := o.dialSocket(ctx, network, addr)
			if err == nil && keep != nil {
				keep(sock)
			}
			return sock, err
		}),
		redis.DialUsername(o.user), redis.DialPassword(o.password),
		redis.DialClientName(o.clientName), redis.DialDatabase(o.db),
		redis.DialReadTimeout(o.readTimeout), redis.DialWriteTimeout(o.writeTimeout))
}

package sqlserver

import (
	"context"
	"database/sql/driver"
	"net"
	"sync"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/azuread"
	"github.com/microsoft/go-mssqldb/msdsn"
)

// defaultKeepAlive is go-mssqldb's own TCP keep-alive period, kept for the
// dialer that replaces its own.
const defaultKeepAlive = 30 * time.Second

// newConnector returns a connector for cfg: the azuread package's (the
// "azuresql" driver) when an Entra ID method is asked for, the plain
// "sqlserver" driver's otherwise. Both check the URL here, before any
// connection. Its connections' logins end with the context they are opened
// under (see boundedConnector).
func newConnector(cfg connConfig) (driver.Connector, error) {
	var c *mssql.Connector
	var err error
	if cfg.fedAuth != "" {
		c, err = azuread.NewConnector(cfg.dsn)
	} else {
		c, err = mssql.NewConnector(cfg.dsn)
	}
	if err != nil {
		return nil, err
	}
	p, err := msdsn.Parse(cfg.dsn)
	if err != nil {
		return nil, err
	}
	if p.DialTimeout < 0 || p.ConnTimeout > 0 {
		// The user chose how connecting is bounded: leave it to go-mssqldb.
		return c, nil
	}
	keepAlive := p.KeepAlive
	if keepAlive == 0 {
		keepAlive = defaultKeepAlive
	}
	c.Dialer = &loginDialer{nd: net.Dialer{KeepAlive: keepAlive}}
	return boundedConnector{c}, nil
}

// boundedConnector bounds each connection's login by the context it is
// opened under. go-mssqldb bounds the TCP connect by its dial timeout, but
// then reads the server's prelogin and login answers without watching the
// context (its "connection timeout" would, but it applies to every read for
// the connection's whole life, so a long query would break it): a server
// that accepts connections and never answers would hang Open forever.
//
// Connect hands the dialer a loginWatch through the context; the dialer sets
// the context's deadline on each connection it opens and closes the wait
// when the context ends; when the login is over, Connect takes both back.
type boundedConnector struct{ *mssql.Connector }

// loginKey is the context key of a Connect's loginWatch.
type loginKey struct{}

// Connect opens one connection, its login bounded by ctx.
func (b boundedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	w := &loginWatch{ctx: ctx}
	conn, err := b.Connector.Connect(context.WithValue(ctx, loginKey{}, w))
	w.done()
	return conn, err
}

// loginWatch ties the connections one login dials to its context.
type loginWatch struct {
	ctx   context.Context
	mu    sync.Mutex
	conns []net.Conn
	stops []func() bool
}

// watch bounds c by the login's context.
func (w *loginWatch) watch(c net.Conn) {
	if d, ok := w.ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	stop := context.AfterFunc(w.ctx, func() { _ = c.SetDeadline(time.Now()) })
	w.mu.Lock()
	w.conns = append(w.conns, c)
	w.stops = append(w.stops, stop)
	w.mu.Unlock()
}

// done ends the watch. When the login ended before its context, its
// connections lose the deadline; when the context ended first (whether or
// not its AfterFunc has run yet) they are given a past one, so that a
// connection the caller gave up on fails at its first use instead of
// living on.
func (w *loginWatch) done() {
	w.mu.Lock()
	defer w.mu.Unlock()
	// The deadline counts as ended once passed, even before the context's
	// own timer has fired and set its error.
	ended := w.ctx.Err() != nil
	if d, ok := w.ctx.Deadline(); ok && !time.Now().Before(d) {
		ended = true
	}
	for i, c := range w.conns {
		w.stops[i]()
		if !ended {
			_ = c.SetDeadline(time.Time{})
		} else {
			_ = c.SetDeadline(time.Now())
		}
	}
}

// loginDialer dials TCP as go-mssqldb's own dialer does, and puts each
// connection under its Connect's loginWatch.
type loginDialer struct{ nd net.Dialer }

// DialContext dials addr and watches the connection's login.
func (d *loginDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if w, ok := ctx.Value(loginKey{}).(*loginWatch); ok {
		w.watch(c)
	}
	return c, nil
}

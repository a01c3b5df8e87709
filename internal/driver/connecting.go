package driver

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// Connecting is one attempt to connect to a database server, for the one
// line Open returns when it fails. Each driver maps its server's own error
// codes (a wrong password, an unknown database, too many connections)
// itself; what every server shares — the network's reasons, the wording
// of "cannot reach", TLS, and keeping a library's words clear of the
// password — is here, so that the drivers say the same thing the same way.
type Connecting struct {
	// Database names the server as its users do: "PostgreSQL", "MySQL",
	// "SQL Server", "Redis".
	Database string
	// Addr is where it was asked for: host:port, or a socket's path.
	Addr string
	// Target is what --db named; a library's words are checked against
	// its password before they are shown.
	Target Target
	// Timeout and Closed, when set, recognise a library's own errors for
	// an answer that did not come in time (pgconn.Timeout) and for a
	// connection the server closed (go-sql-driver's ErrInvalidConn),
	// beside the network's.
	Timeout, Closed func(error) bool
}

// The reasons NetReason gives.
const (
	ReasonRefused     = "connection refused"
	ReasonTimeout     = "no answer in time"
	ReasonNoHost      = "host not found"
	ReasonNoNetwork   = "network is unreachable"
	ReasonNoRoute     = "no route to host"
	ReasonNoSocket    = "no socket there"
	ReasonServerClose = "the server closed the connection"
)

// checkServer is what to check when a server cannot be reached.
const checkServer = "check host and port and that the server is running"

// NetReason says in a few words why err, a failure to connect, failed at
// the network, or "" when it did not (the server answered, or the failure
// is TLS's or the library's).
func (c Connecting) NetReason(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	var opErr *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return ReasonRefused
	case errors.Is(err, context.DeadlineExceeded) || (c.Timeout != nil && c.Timeout(err)) || (errors.As(err, &netErr) && netErr.Timeout()):
		return ReasonTimeout
	case errors.As(err, &dnsErr):
		return ReasonNoHost
	case errors.Is(err, syscall.ENETUNREACH):
		return ReasonNoNetwork
	case errors.Is(err, syscall.EHOSTUNREACH):
		return ReasonNoRoute
	case errors.Is(err, syscall.ENOENT) && errors.As(err, &opErr) && opErr.Op == "dial":
		// A Unix socket path where no server listens.
		return ReasonNoSocket
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		(c.Closed != nil && c.Closed(err)):
		return ReasonServerClose
	}
	return ""
}

// Unreachable returns the bad input of a server that could not be
// reached — "cannot reach PostgreSQL at 127.0.0.1:5432: connection
// refused; check host and port and that the server is running" — or nil
// when err did not fail at the network. hint replaces what to check when
// it is not "".
func (c Connecting) Unreachable(err error, hint string) error {
	reason := c.NetReason(err)
	if reason == "" {
		return nil
	}
	if hint == "" {
		hint = checkServer
	}
	return badinput.New("cannot reach %s at %s: %w; %s", c.Database, c.Addr, &Scrubbed{Msg: reason, Err: err}, hint)
}

// Cause is err as the part of a message dbprobe builds around it, in the
// words msg of the server or the library, withheld whole if they give the
// password away (Target.Scrub).
func (c Connecting) Cause(msg string, err error) *Scrubbed {
	return &Scrubbed{Msg: c.Target.Scrub(msg), Err: err}
}

// Refused returns the bad input of a server that refused the credentials:
// "MySQL at ADDR refused user "bob": access denied; check the user and
// password (URL, DBPROBE_PASSWORD)". who names the user ("user "bob"",
// "login "sa""); short is dbprobe's own words for the refusal, never the
// server's, which may quote what was sent.
func (c Connecting) Refused(who, short string, err error) error {
	return badinput.New("%s at %s refused %s: %w; check the user and password (URL, DBPROBE_PASSWORD)",
		c.Database, c.Addr, who, &Scrubbed{Msg: short, Err: err})
}

// TLS returns the bad input of a TLS handshake that failed: "cannot open
// a TLS connection to X at ADDR: <shown>; <hint>", shown being the
// library's words (LastPart of its message, usually), checked for the
// password.
func (c Connecting) TLS(shown, hint string, err error) error {
	return badinput.New("cannot open a TLS connection to %s at %s: %w; %s", c.Database, c.Addr, c.Cause(shown, err), hint)
}

// Failed is the message of any other failure: "open X at ADDR: " and the
// library's message, withheld whole, with what to check, when it gives
// the password away (Target.ScrubConnect). It is not bad input: dbprobe
// cannot tell whether the user can fix it.
func (c Connecting) Failed(msg string, err error) error {
	return &Scrubbed{Msg: "open " + c.Database + " at " + c.Addr + ": " + c.Target.ScrubConnect(msg), Err: err}
}

// LastPart returns the text after the last ": ", the innermost complaint
// of a chain of wrapped messages.
func LastPart(msg string) string {
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

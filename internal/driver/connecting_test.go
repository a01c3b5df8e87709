package driver

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// dialErr returns the error of really dialling network addr, so that the
// reasons are read from what the net package returns, not from errors
// made up to match.
func dialErr(t *testing.T, network, addr string) error {
	t.Helper()
	c, err := net.Dial(network, addr)
	if err == nil {
		c.Close()
		t.Fatalf("dial %s %s: connected", network, addr)
	}
	return err
}

// closedPort returns a TCP address on loopback where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestNetReason(t *testing.T) {
	libTimeout := errors.New("library: timeout")
	libClosed := errors.New("library: bad connection")
	c := Connecting{
		Database: "X", Addr: "h:1",
		Timeout: func(err error) bool { return errors.Is(err, libTimeout) },
		Closed:  func(err error) bool { return errors.Is(err, libClosed) },
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"refused", dialErr(t, "tcp", closedPort(t)), ReasonRefused},
		{"no socket", dialErr(t, "unix", filepath.Join(t.TempDir(), "none.sock")), ReasonNoSocket},
		{"deadline", fmt.Errorf("connect: %w", context.DeadlineExceeded), ReasonTimeout},
		{"library timeout", fmt.Errorf("x: %w", libTimeout), ReasonTimeout},
		{"dns", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "nowhere.invalid"}}, ReasonNoHost},
		{"network unreachable", &net.OpError{Op: "dial", Err: syscall.ENETUNREACH}, ReasonNoNetwork},
		{"no route", &net.OpError{Op: "dial", Err: syscall.EHOSTUNREACH}, ReasonNoRoute},
		{"reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, ReasonServerClose},
		{"eof", fmt.Errorf("handshake: %w", io.EOF), ReasonServerClose},
		{"library closed", fmt.Errorf("x: %w", libClosed), ReasonServerClose},
		// A missing file is not a missing socket unless dialling said so.
		{"missing file", fmt.Errorf("open ca.pem: %w", syscall.ENOENT), ""},
		{"certificate", x509.UnknownAuthorityError{}, ""},
		{"server answered", errors.New("FATAL: role does not exist"), ""},
	} {
		if got := c.NetReason(tc.err); got != tc.want {
			t.Errorf("%s: NetReason(%v) = %q, want %q", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestConnectingMessages(t *testing.T) {
	target := stubTarget(t, "stub://bob:hunter2@127.0.0.1:1/x", "")
	c := Connecting{Database: "PostgreSQL", Addr: "127.0.0.1:1", Target: target}
	refused := dialErr(t, "tcp", closedPort(t))
	leaky := errors.New("cannot parse `password=hunter2`")

	u := c.Unreachable(refused, "")
	if !badinput.Is(u) || !errors.Is(u, syscall.ECONNREFUSED) {
		t.Errorf("Unreachable: %v is not bad input wrapping the cause", u)
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"unreachable", u, "cannot reach PostgreSQL at 127.0.0.1:1: connection refused; check host and port and that the server is running"},
		{"unreachable, own hint", c.Unreachable(refused, "check the port speaks TLS"), "cannot reach PostgreSQL at 127.0.0.1:1: connection refused; check the port speaks TLS"},
		{"refused", c.Refused(`user "bob"`, "password authentication failed", errors.New("FATAL: password authentication failed for user bob")),
			`PostgreSQL at 127.0.0.1:1 refused user "bob": password authentication failed; check the user and password (URL, DBPROBE_PASSWORD)`},
		{"tls", c.TLS("x509: certificate signed by unknown authority", "check sslmode", errors.New("tls")),
			"cannot open a TLS connection to PostgreSQL at 127.0.0.1:1: x509: certificate signed by unknown authority; check sslmode"},
		{"tls, password withheld", c.TLS(leaky.Error(), "check sslmode", leaky),
			"cannot open a TLS connection to PostgreSQL at 127.0.0.1:1: " + Withheld + "; check sslmode"},
		{"failed", c.Failed("something odd", errors.New("odd")), "open PostgreSQL at 127.0.0.1:1: something odd"},
		{"failed, password withheld", c.Failed(leaky.Error(), leaky), "open PostgreSQL at 127.0.0.1:1: " + Withheld + withheldCheck},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		if got := target.ScrubError(tc.err); got != tc.want {
			t.Errorf("%s: ScrubError changed a settled message: %s", tc.name, got)
		}
	}
	if c.Unreachable(errors.New("FATAL: no"), "") != nil {
		t.Error("Unreachable of an answer from the server is not nil")
	}
	if got := c.Cause("it is hunter2", leaky).Error(); got != Withheld {
		t.Errorf("Cause kept the password: %s", got)
	}
}

func TestLastPart(t *testing.T) {
	for in, want := range map[string]string{
		"a: b: c": "c",
		"plain":   "plain",
		"a:b":     "a:b",
	} {
		if got := LastPart(in); got != want {
			t.Errorf("LastPart(%q) = %q, want %q", in, got, want)
		}
	}
}

package redis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/gomodule/redigo/redis"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Codes for failures that carry no Redis error code, so that results can
// still count them by code.
const (
	codeTimeout     = "timeout"
	codeConnLost    = "connection-lost"
	codeCanceled    = "canceled"
	codePoolTimeout = "pool-timeout"
	// codeWatch is an optimistic transaction that EXEC aborted (a null
	// reply) because another client wrote a key it WATCHed.
	codeWatch = "WATCH"
	// codeExists is the error our insert scripts raise for a key that is
	// already there: the first word of their error reply.
	codeExists = "EXISTS"
	// codeNoPerm is the error of a command the user's ACL refuses.
	codeNoPerm = "NOPERM"
	// codeNoScript is EVALSHA's error for a script the server does not
	// have (SCRIPT FLUSH, a restart).
	codeNoScript = "NOSCRIPT"
)

var (
	// errWatchAborted is an EXEC that ran nothing because another client
	// wrote a WATCHed key (its null reply).
	errWatchAborted = errors.New("redis: transaction aborted: a WATCHed key changed")
	// errPoolTimeout is a call that found no free connection in the DB's
	// pool within pool_timeout.
	errPoolTimeout = errors.New("redis: no free connection in the pool within pool_timeout")
)

// classify wraps err with its code and class for the runner's policy.
// ErrNotFound and nil pass unchanged. The code of an error reply is its
// first word, which is already Redis's name for the error (OOM, READONLY,
// MISCONF): the error carries no Name besides, so that results show "OOM"
// and not "OOM OOM".
func classify(err error) error {
	if err == nil || errors.Is(err, driver.ErrNotFound) {
		return err
	}
	var done *driver.Error
	if errors.As(err, &done) {
		return err // classified already
	}
	code, class := classOf(err)
	classified := driver.Classify(err, code, class)
	if code == codeNoPerm {
		// The user's ACL refuses the command or the key: only the ACL can
		// change that.
		return driver.PermissionDenied("Redis", err.Error(), classified)
	}
	return classified
}

// classOf returns the code and class of an error from redigo or the
// driver.
func classOf(err error) (string, driver.Class) {
	switch {
	case errors.Is(err, context.Canceled):
		// The caller gave up (the run is stopping): not the server's fault.
		return codeCanceled, driver.ClassOther
	case errors.Is(err, context.DeadlineExceeded):
		return codeTimeout, driver.ClassTimeout
	case errors.Is(err, errWatchAborted):
		return codeWatch, driver.ClassConflict
	case errors.Is(err, errPoolTimeout):
		// Every connection was busy for PoolTimeout.
		return codePoolTimeout, driver.ClassTimeout
	}
	if code, ok := serverCode(err); ok {
		if code == "ERR" && strings.Contains(err.Error(), "The user executing the script can't run this command") {
			// The ACL refusal of a command inside a script comes back as
			// ERR, not NOPERM: the same refusal.
			return codeNoPerm, driver.ClassFatal
		}
		switch code {
		case "BUSY", "LOADING", "TRYAGAIN", "MASTERDOWN":
			// A script past busy-reply-threshold, a dataset still loading,
			// a multi-key operation during resharding, a replica without
			// its master: the same operation may succeed a moment later.
			return code, driver.ClassBusy
		case "OOM", "READONLY", "MISCONF", codeNoPerm:
			// Used memory past maxmemory with nothing the policy may
			// evict, a write to a replica, writes stopped after a failed
			// RDB save (a full disk, most often), a command or key the
			// ACL refuses: no repeat succeeds until someone acts.
			return code, driver.ClassFatal
		}
		return code, driver.ClassOther
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return codeTimeout, driver.ClassTimeout
	}
	if isConnLost(err) {
		return codeConnLost, driver.ClassConnLost
	}
	return "", driver.ClassOther
}

// serverCode returns the first word of an error reply from the server
// (WRONGTYPE, BUSY, NOSCRIPT, ERR, …), which Redis uses as its error code.
func serverCode(err error) (string, bool) {
	var re redis.Error
	if !errors.As(err, &re) {
		return "", false
	}
	msg := re.Error()
	if i := strings.IndexByte(msg, ' '); i >= 0 {
		msg = msg[:i]
	}
	if msg == "" || strings.ToUpper(msg) != msg {
		// Not a server's code: Redis's are upper-case words.
		return "", false
	}
	return msg, true
}

// isConnLost reports an error of a connection that broke or was closed.
func isConnLost(err error) bool {
	return errors.Is(err, errClosed) || errors.Is(err, syscall.ECONNREFUSED) || driver.IsNetworkError(err)
}

// openError turns a failure to connect into a one-line message that says
// what to do, never holding the password. Errors the user can fix are
// badinput.
func openError(err error, target driver.Target, addr, user string, db int, overTLS bool) error {
	who := "the default user"
	if user != "" {
		who = fmt.Sprintf("user %q", user)
	}
	c := driver.Connecting{Database: "Redis", Addr: addr, Target: target}
	if code, ok := serverCode(err); ok {
		cause := c.Cause(err.Error(), err)
		switch {
		case code == "WRONGPASS":
			return c.Refused(who, "WRONGPASS: wrong password or user disabled", err)
		case code == "NOAUTH":
			return badinput.New("Redis at %s wants a password: %w; give it in the URL (redis://:PASSWORD@%s/%d) or DBPROBE_PASSWORD",
				addr, &driver.Scrubbed{Msg: "NOAUTH", Err: err}, addr, db)
		case code == "ERR" && strings.Contains(err.Error(), "without any password configured"):
			return badinput.New("Redis at %s has no password set but one was given: %w; remove it from the URL and DBPROBE_PASSWORD",
				addr, &driver.Scrubbed{Msg: "AUTH refused", Err: err})
		case code == "ERR" && strings.Contains(err.Error(), "DB index is out of range"):
			return badinput.New("Redis at %s has no database %d: %w; name one below the server's `databases` setting in the URL (…/0)",
				addr, db, cause)
		case code == "NOPERM":
			return badinput.New("Redis at %s refused %s a command dbprobe needs: %w; grant it in the server's ACL", addr, who, cause)
		case code == "LOADING":
			return badinput.New("Redis at %s is loading its dataset: %w; wait until it has finished and run again", addr, cause)
		case code == "ERR" && strings.Contains(strings.ToLower(err.Error()), "max number of clients"):
			return badinput.New("Redis at %s refused the connection: %w; raise maxclients or use fewer threads", addr, cause)
		}
		return c.Failed(err.Error(), err)
	}

	// A closed connection is told apart from a TLS failure after the TLS
	// checks: a TLS client at a plain port sees the server hang up.
	reason := c.NetReason(err)
	var certErr *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	switch {
	case reason != "" && reason != driver.ReasonServerClose:
	case errors.As(err, &certErr) || errors.As(err, &unknownAuthority) || errors.As(err, &hostnameErr):
		return c.TLS(err.Error(), "rediss:// needs a certificate this machine trusts (?skip_verify=true accepts any, unverified)", err)
	case strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "first record does not look like a TLS handshake"):
		return c.TLS(err.Error(), "use redis:// for a server without TLS", err)
	}
	switch {
	case reason == "":
	case overTLS:
		over := c
		over.Addr += " over TLS"
		return over.Unreachable(err, "check host and port, that the server is running and that the port speaks TLS (redis:// for one without)")
	case reason == driver.ReasonServerClose:
		return c.Unreachable(err, "check host and port and that the server is running (a TLS port needs rediss://)")
	default:
		return c.Unreachable(err, "")
	}
	return c.Failed(err.Error(), err)
}

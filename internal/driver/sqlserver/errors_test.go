package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/dbprobe/dbprobe/internal/badinput"
	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

// fatalWrapper stands for go-mssqldb's ServerError, a fatal error that ends
// the connection, around inner: ServerError's field is unexported, so the
// test cannot build one that wraps a number, and this wrapper answers
// errors.As for a ServerError instead.
type fatalWrapper struct{ inner mssql.Error }

func (f fatalWrapper) Error() string { return "fatal: " + f.inner.Error() }
func (f fatalWrapper) As(target any) bool {
	if p, ok := target.(*mssql.ServerError); ok {
		*p = mssql.ServerError{}
		return true
	}
	return false
}
func (f fatalWrapper) Unwrap() error { return f.inner }

// wraps reports whether err wraps orig. An mssql.Error holds a slice and
// cannot be compared, so errors.Is never finds one: it is matched by number.
func wraps(err, orig error) bool {
	var want mssql.Error
	if errors.As(orig, &want) {
		var got mssql.Error
		return errors.As(err, &got) && got.Number == want.Number
	}
	return errors.Is(err, orig)
}

func TestClassify(t *testing.T) {
	num := func(n int32) error { return mssql.Error{Number: n, Message: fmt.Sprintf("error %d", n)} }
	for _, tc := range []struct {
		name  string
		err   error
		class dbdriver.Class
		code  string
	}{
		{"in-memory write conflict", num(41302), dbdriver.ClassConflict, "41302"},
		{"repeatable read validation", num(41305), dbdriver.ClassConflict, "41305"},
		{"serializable validation", num(41325), dbdriver.ClassConflict, "41325"},
		{"commit dependency failed", num(41301), dbdriver.ClassConflict, "41301"},
		{"too many commit dependencies", num(41839), dbdriver.ClassConflict, "41839"},
		{"deadlock victim", num(1205), dbdriver.ClassConflict, "1205"},
		{"snapshot update conflict", num(3960), dbdriver.ClassConflict, "3960"},
		{"deadlock, wrapped", fmt.Errorf("update: %w", num(1205)), dbdriver.ClassConflict, "1205"},
		{"duplicate primary key", num(2627), dbdriver.ClassOther, "2627"},
		{"duplicate unique index", num(2601), dbdriver.ClassOther, "2601"},
		{"syntax error", num(102), dbdriver.ClassOther, "102"},
		{"client timeout number", num(-2), dbdriver.ClassTimeout, "-2"},
		{"lock timeout", num(1222), dbdriver.ClassBusy, "1222"},
		{"Azure resource limit", num(10928), dbdriver.ClassBusy, "10928"},
		// Microsoft's transient errors for Azure SQL: retried on a new connection.
		{"cannot open database (reconfiguration)", num(4060), dbdriver.ClassTransient, "4060"},
		{"no lock resources", num(1204), dbdriver.ClassTransient, "1204"},
		{"Azure database unavailable", num(40613), dbdriver.ClassTransient, "40613"},
		{"Azure service error", num(40197), dbdriver.ClassTransient, "40197"},
		{"Azure service busy", num(40501), dbdriver.ClassTransient, "40501"},
		{"Azure not enough resources", num(49918), dbdriver.ClassTransient, "49918"},
		{"transient after its statement ended", mssql.Error{Number: 3621, All: []mssql.Error{{Number: 40501}, {Number: 3621}}}, dbdriver.ClassTransient, "40501"},
		// Fatal: more attempts cannot fix them.
		{"XTP quota, database", num(41823), dbdriver.ClassFatal, "41823"},
		{"XTP quota, elastic pool", num(41840), dbdriver.ClassFatal, "41840"},
		{"filegroup full", num(1105), dbdriver.ClassFatal, "1105"},
		{"no space for a new page", num(1101), dbdriver.ClassFatal, "1101"},
		{"log full", num(9002), dbdriver.ClassFatal, "9002"},
		{"Azure size quota", num(40544), dbdriver.ClassFatal, "40544"},
		{"Azure log space of a transaction", num(40552), dbdriver.ClassFatal, "40552"},
		{"read-only database", num(3906), dbdriver.ClassFatal, "3906"},
		{"permission denied", num(229), dbdriver.ClassFatal, "229"},
		{"column permission denied", num(230), dbdriver.ClassFatal, "230"},
		{"permission denied in the database", num(262), dbdriver.ClassFatal, "262"},
		{"filegroup full, then its statement ended", mssql.Error{Number: 3621, All: []mssql.Error{{Number: 1105}, {Number: 3621}}}, dbdriver.ClassFatal, "1105"},
		{"transport 10054", num(10054), dbdriver.ClassConnLost, "10054"},
		{"transport 10053", num(10053), dbdriver.ClassConnLost, "10053"},
		{"no process on the other end", num(233), dbdriver.ClassConnLost, "233"},
		{"fatal server error", fatalWrapper{inner: mssql.Error{Number: 3624}}, dbdriver.ClassConnLost, "3624"},
		{"deadline", context.DeadlineExceeded, dbdriver.ClassTimeout, codeTimeout},
		{"deadline, wrapped", fmt.Errorf("read: %w", context.DeadlineExceeded), dbdriver.ClassTimeout, codeTimeout},
		{"canceled", context.Canceled, dbdriver.ClassOther, codeCanceled},
		{"bad connection", driver.ErrBadConn, dbdriver.ClassConnLost, codeConnLost},
		{"connection done", sql.ErrConnDone, dbdriver.ClassConnLost, codeConnLost},
		{"EOF", io.EOF, dbdriver.ClassConnLost, codeConnLost},
		{"unexpected EOF", io.ErrUnexpectedEOF, dbdriver.ClassConnLost, codeConnLost},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, dbdriver.ClassConnLost, codeConnLost},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), dbdriver.ClassConnLost, codeConnLost},
		{"closed", net.ErrClosed, dbdriver.ClassConnLost, codeConnLost},
		{"stream", mssql.StreamError{InnerError: errors.New("bad token")}, dbdriver.ClassConnLost, codeConnLost},
		{"conflict before the batch's own error", mssql.Error{Number: 3998, All: []mssql.Error{{Number: 41302}, {Number: 3998}}}, dbdriver.ClassConflict, "41302"},
		{"deadlock inside a procedure", mssql.Error{Number: 50000, All: []mssql.Error{{Number: 1205}, {Number: 50000}}}, dbdriver.ClassConflict, "1205"},
		{"duplicate, then its statement ended", mssql.Error{Number: 3621, All: []mssql.Error{{Number: 2627}, {Number: 3621}}}, dbdriver.ClassOther, "2627"},
		{"other", errors.New("something else"), dbdriver.ClassOther, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := classify(tc.err)
			if got := dbdriver.ClassOf(err); got != tc.class {
				t.Errorf("class = %v, want %v", got, tc.class)
			}
			if got := dbdriver.Code(err); got != tc.code {
				t.Errorf("code = %q, want %q", got, tc.code)
			}
			if !wraps(err, tc.err) {
				t.Errorf("the classified error does not wrap the original")
			}
		})
	}
	if classify(nil) != nil {
		t.Error("classify(nil) != nil")
	}
	if err := classify(dbdriver.ErrNotFound); err != dbdriver.ErrNotFound {
		t.Errorf("classify(ErrNotFound) = %v, want it unchanged", err)
	}
	// The runner retries exactly the conflicts and busy errors.
	if !dbdriver.IsRetryable(classify(mssql.Error{Number: 41302})) || dbdriver.IsRetryable(classify(mssql.Error{Number: 2627})) {
		t.Error("41302 must be retryable and 2627 must not")
	}
}

// TestErrorNames: the label shows the number first, then its name; a
// number without one keeps the number alone.
func TestErrorNames(t *testing.T) {
	for _, tc := range []struct {
		err   error
		label string
	}{
		{mssql.Error{Number: 1205}, "1205 DEADLOCK_VICTIM"},
		{mssql.Error{Number: 41302}, "41302 XTP_UPDATE_CONFLICT"},
		{mssql.Error{Number: 41823}, "41823 XTP_DATABASE_QUOTA"},
		{mssql.Error{Number: 40544}, "40544 DATABASE_SIZE_QUOTA"},
		{mssql.Error{Number: 1105}, "1105 FILEGROUP_FULL"},
		{mssql.Error{Number: 9002}, "9002 LOG_FULL"},
		{mssql.Error{Number: 3906}, "3906 DATABASE_READ_ONLY"},
		{mssql.Error{Number: 40613}, "40613 DATABASE_UNAVAILABLE"},
		{mssql.Error{Number: 2627}, "2627 DUPLICATE_KEY_CONSTRAINT"},
		{mssql.Error{Number: 3621, All: []mssql.Error{{Number: 2627}, {Number: 3621}}}, "2627 DUPLICATE_KEY_CONSTRAINT"},
		{fatalWrapper{inner: mssql.Error{Number: 9002}}, "9002 LOG_FULL"},
		{mssql.Error{Number: 102}, "102"},
		{context.DeadlineExceeded, codeTimeout},
	} {
		if got := dbdriver.Label(classify(tc.err)); got != tc.label {
			t.Errorf("Label(%v) = %q, want %q", tc.err, got, tc.label)
		}
	}
	for n, name := range errorNames {
		if name == "" || strings.ContainsAny(name, " \t") || strings.ToUpper(name) != name {
			t.Errorf("%d: name %q is not one upper-case token", n, name)
		}
	}
}

// TestFatalNotRetried: no fatal number is retried or taken for a lost
// connection.
func TestFatalNotRetried(t *testing.T) {
	for _, n := range []int32{41823, 41840, 40544, 40552, 1105, 1101, 9002, 3906, 229, 230, 262} {
		err := classify(mssql.Error{Number: n})
		if !dbdriver.IsFatal(err) || dbdriver.IsRetryable(err) || dbdriver.IsConnLost(err) {
			t.Errorf("%d: fatal %v, retryable %v, connection lost %v", n, dbdriver.IsFatal(err), dbdriver.IsRetryable(err), dbdriver.IsConnLost(err))
		}
	}
}

// TestTransientRetried: every transient number is retried by the runner's
// policy and is not a lost connection (which the runner would not retry).
func TestTransientRetried(t *testing.T) {
	for _, n := range []int32{4060, 1204, 40613, 40197, 40501, 49918} {
		err := classify(mssql.Error{Number: n})
		if !dbdriver.IsRetryable(err) || dbdriver.IsConnLost(err) {
			t.Errorf("%d: retryable %v, connection lost %v; want retried", n, dbdriver.IsRetryable(err), dbdriver.IsConnLost(err))
		}
	}
}

// TestQuotaMessage: 41823 and 41840 name the quota and the way out, and
// keep the server's error as their cause.
func TestQuotaMessage(t *testing.T) {
	for n, whose := range map[int32]string{41823: "the database's", 41840: "the elastic pool's"} {
		orig := mssql.Error{Number: n, Message: "Could not perform the operation because the database has reached its quota for in-memory tables."}
		err := classify(fmt.Errorf("insert: %w", orig))
		want := fmt.Sprintf("Azure SQL: %s In-Memory OLTP storage quota is reached (error %d): ", whose, n)
		if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "table type disk") {
			t.Errorf("%d: %q, want it to start %q and name table type disk", n, err, want)
		}
		if dbdriver.Code(err) != fmt.Sprint(n) || dbdriver.IsRetryable(err) || !wraps(err, orig) {
			t.Errorf("%d: code %q, retryable %v, wraps %v", n, dbdriver.Code(err), dbdriver.IsRetryable(err), wraps(err, orig))
		}
	}
}

func TestAnyNumber(t *testing.T) {
	alter := mssql.Error{Number: 5069, All: []mssql.Error{{Number: 5011}, {Number: 5069}}}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{alter, true},
		{fmt.Errorf("apply: %w", alter), true},
		{mssql.Error{Number: 262}, true},
		{mssql.Error{Number: 5069, All: []mssql.Error{{Number: 5069}}}, false},
		{errors.New("5011"), false},
	} {
		if got := anyNumber(tc.err, isPermissionError); got != tc.want {
			t.Errorf("anyNumber(%v, isPermissionError) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestOpenError(t *testing.T) {
	const secret = "S3cret!pw"
	u, _ := url.Parse("sqlserver://ycsb:" + url.QueryEscape(secret) + "@db.example:1433?database=bench")
	target := dbdriver.Target{URL: u, Password: secret}
	cfg := connConfig{database: "bench", user: "ycsb", addr: "db.example:1433"}
	azure := cfg
	azure.fedAuth = "ActiveDirectoryDefault"
	login := func(n int32, msg string) error {
		return mssql.Error{Number: n, Message: "login error: " + msg}
	}
	for _, tc := range []struct {
		name string
		err  error
		cfg  connConfig
		want string // the whole message; "" when the error is not bad input
	}{
		{"wrong password", login(18456, "Login failed for user 'ycsb'."), cfg,
			`SQL Server at db.example:1433 refused login "ycsb": login failed; check the user and password (URL, DBPROBE_PASSWORD)`},
		{"missing database", login(4060, `Cannot open database "bench" requested by the login. The login failed.`), cfg,
			`SQL Server at db.example:1433: cannot open database "bench" (it does not exist, or login "ycsb" may not use it); create it (CREATE DATABASE [bench]) or name another with ?database=`},
		{"Entra ID identity not a user", login(18456, "Login failed for user '<token-identified principal>'."), azure,
			`SQL Server at db.example:1433 refused the Entra ID identity (fedauth=ActiveDirectoryDefault): Login failed for user '<token-identified principal>'.; check that it is a user of database "bench"`},
		{"firewall", login(40615, "Cannot open server 'x' requested by the login. Client with IP address '1.2.3.4' is not allowed to access the server."), cfg,
			`Azure SQL at db.example:1433 refused the connection: Cannot open server 'x' requested by the login. Client with IP address '1.2.3.4' is not allowed to access the server.; allow this client's address in the server's firewall, or check the server name`},
		{"refused", fmt.Errorf("unable to open tcp connection with host 'db.example:1433': %w", &net.OpError{Op: "dial", Net: "tcp", Err: &net.OpError{Err: syscall.ECONNREFUSED}}), cfg,
			"cannot reach SQL Server at db.example:1433: connection refused; check host and port and that the server is running"},
		{"unknown host", fmt.Errorf("dial: %w", &net.DNSError{Err: "no such host", Name: "db.example", IsNotFound: true}), cfg,
			"cannot reach SQL Server at db.example:1433: host not found; check host and port and that the server is running"},
		{"deadline", fmt.Errorf("login: %w", context.DeadlineExceeded), cfg,
			"cannot reach SQL Server at db.example:1433: no answer in time; check host and port and that the server is running"},
		{"TLS", errors.New("TLS Handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"), cfg,
			"cannot open a TLS connection to SQL Server at db.example:1433: certificate signed by unknown authority; trust the server's certificate (TrustServerCertificate=true for a test server with a self-signed one) or set encrypt= in the URL"},
		{"token", errors.New("DefaultAzureCredential: failed to acquire a token.\nAttempted credentials:\n\tEnvironmentCredential: missing environment variables"), azure,
			"cannot sign in to SQL Server at db.example:1433 with Entra ID (fedauth=ActiveDirectoryDefault): DefaultAzureCredential: failed to acquire a token.; check the identity's credentials (az login, managed identity, environment, user and password)"},
		{"other server error", mssql.Error{Number: 50000, Message: "custom " + secret}, cfg, ""},
		{"other error", errors.New("strange " + secret), cfg, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := openError(tc.err, target, tc.cfg)
			msg := err.Error()
			if strings.Contains(msg, secret) || strings.Contains(msg, url.QueryEscape(secret)) {
				t.Errorf("message holds the password: %q", msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("message has several lines: %q", msg)
			}
			if tc.want == "" {
				if badinput.Is(err) {
					t.Errorf("%q is bad input, want a plain error", msg)
				}
				return
			}
			if !badinput.Is(err) || msg != tc.want {
				t.Errorf("openError =\n %q (bad input %v)\nwant\n %q", msg, badinput.Is(err), tc.want)
			}
			if !wraps(err, tc.err) {
				t.Errorf("the cause is not reachable with errors.Is or errors.As")
			}
		})
	}
}

func TestDirectoryOf(t *testing.T) {
	for path, want := range map[string]string{
		`C:\Program Files\Microsoft SQL Server\MSSQL16.MSSQLSERVER\MSSQL\DATA\bench.mdf`: `C:\Program Files\Microsoft SQL Server\MSSQL16.MSSQLSERVER\MSSQL\DATA`,
		"/var/opt/mssql/data/bench.mdf": "/var/opt/mssql/data",
		`C:\bench.mdf`:                  `C:\`,
		"/bench.mdf":                    "/",
		"data_0":                        "",
		"":                              "",
	} {
		if got := directoryOf(path); got != want {
			t.Errorf("directoryOf(%q) = %q, want %q", path, got, want)
		}
	}
}

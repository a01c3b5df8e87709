package sqlserver_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	_ "github.com/dbprobe/dbprobe/internal/driver/sqlserver"
)

// openURL opens rawURL through the registry, as the command does.
func openURL(t testing.TB, ctx context.Context, rawURL, password string, opts driver.Options) (driver.DB, error) {
	t.Helper()
	target, err := driver.ParseTarget(rawURL, password)
	if err != nil {
		t.Fatalf("ParseTarget(%q): %v", rawURL, err)
	}
	d, _, err := driver.Lookup(target.Driver)
	if err != nil {
		t.Fatal(err)
	}
	return d.Open(ctx, target, opts)
}

func TestRegistered(t *testing.T) {
	for _, scheme := range []string{"sqlserver", "mssql", "azuresql"} {
		if _, name, err := driver.Lookup(scheme); err != nil || name != "sqlserver" {
			t.Errorf("Lookup(%q) = %q, %v; want sqlserver", scheme, name, err)
		}
	}
}

// closedPort returns a port on 127.0.0.1 that nothing listens on.
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestOpenBadInput covers what Open refuses before or without a server:
// every refusal is one line of bad input that says what to do and never
// holds the password.
func TestOpenBadInput(t *testing.T) {
	const secret = "Pa55word-secret"
	port := closedPort(t)
	for _, tc := range []struct {
		name string
		url  string
		opts driver.Options
		want string // the whole message, or a prefix ending in "…"
	}{
		{"no database", "sqlserver://sa:" + secret + "@127.0.0.1:1433",
			driver.Options{},
			"--db sqlserver://sa:xxxxx@127.0.0.1:1433 names no database; add ?database=NAME, as in sqlserver://user:password@host:1433?database=NAME"},
		{"database as a path", "mssql://sa:" + secret + "@127.0.0.1:1433/bench",
			driver.Options{},
			"--db mssql://sa:xxxxx@127.0.0.1:1433/bench names no database (in go-mssqldb's URL the path /bench names an instance, not a database); add ?database=NAME, as in sqlserver://user:password@host:1433?database=NAME"},
		{"unknown fedauth", "azuresql://h.database.windows.net?database=bench&fedauth=ActiveDirectoryMagic",
			driver.Options{},
			`--db azuresql://h.database.windows.net?database=bench&fedauth=ActiveDirectoryMagic: unknown fedauth "ActiveDirectoryMagic"; use one of ActiveDirectoryDefault, ActiveDirectoryPassword, …`},
		{"Entra ID password without its application", "sqlserver://user%40example.com:" + secret + "@127.0.0.1:1?database=bench&fedauth=ActiveDirectoryPassword",
			driver.Options{},
			"--db sqlserver://user%40example.com:xxxxx@127.0.0.1:1?database=bench&fedauth=ActiveDirectoryPassword: fedauth=ActiveDirectoryPassword needs applicationclientid= (the application (client) ID of an app registration in your Entra ID tenant that may sign users in to Azure SQL); add &applicationclientid=ID, or use fedauth=ActiveDirectoryDefault"},
		{"Entra ID integrated, which go-mssqldb runs as Default", "azuresql://h.database.windows.net?database=bench&fedauth=ActiveDirectoryIntegrated",
			driver.Options{},
			"--db azuresql://h.database.windows.net?database=bench&fedauth=ActiveDirectoryIntegrated: fedauth=ActiveDirectoryIntegrated is not integrated sign-in in go-mssqldb v1.11: …"},
		{"malformed escape", "sqlserver://sa:" + secret + "@127.0.0.1?database=be%zznch",
			driver.Options{},
			"--db sqlserver://sa:xxxxx@127.0.0.1?database=be%zznch has a malformed query string: a malformed %-escape; write options as ?database=NAME&key=value"},
		{"bad option", "sqlserver://sa:" + secret + "@127.0.0.1?database=bench&dial+timeout=soon",
			driver.Options{},
			"--db sqlserver://sa:xxxxx@127.0.0.1?database=bench&dial+timeout=soon: invalid dial timeout 'soon': …"},
		{"unknown table type", fmt.Sprintf("sqlserver://sa:%s@127.0.0.1:%d?database=bench", secret, port),
			driver.Options{TableType: driver.TableType(7)},
			"SQL Server has no table type tabletype(7); use disk, memory or nondurable"},
		{"bucket count over the limit", fmt.Sprintf("sqlserver://sa:%s@127.0.0.1:%d?database=bench", secret, port),
			driver.Options{TableType: driver.TableMemory, BucketCount: 1 << 31},
			"bucket count 2147483648 is above SQL Server's limit of 1073741824 (2^30); choose a smaller one"},
		{"connection refused", fmt.Sprintf("sqlserver://sa:%s@127.0.0.1:%d?database=bench", secret, port),
			driver.Options{},
			fmt.Sprintf("cannot reach SQL Server at 127.0.0.1:%d: connection refused; check host and port and that the server is running", port)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			db, err := openURL(t, ctx, tc.url, "", tc.opts)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v to fail", d)
			}
			msg := err.Error()
			if !badinput.Is(err) {
				t.Errorf("not bad input: %q", msg)
			}
			if prefix, ok := strings.CutSuffix(tc.want, "…"); ok {
				if !strings.HasPrefix(msg, prefix) {
					t.Errorf("message\n %q\nwant it to start with\n %q", msg, prefix)
				}
			} else if msg != tc.want {
				t.Errorf("message\n %q\nwant\n %q", msg, tc.want)
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
				t.Errorf("message holds the password or several lines: %q", msg)
			}
		})
	}
}

// A server that accepts connections and never answers: the context's
// deadline must end the wait, as bad input.
func TestOpenSilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	db, err := openURL(t, ctx, fmt.Sprintf("sqlserver://sa:secret@127.0.0.1:%d?database=bench", port), "", driver.Options{})
	if err == nil {
		db.Close()
		t.Fatal("Open of a silent server succeeded")
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %v to fail under a 2 s deadline", d)
	}
	want := fmt.Sprintf("cannot reach SQL Server at 127.0.0.1:%d: no answer in time; check host and port and that the server is running", port)
	if !badinput.Is(err) || err.Error() != want {
		t.Errorf("error %q (bad input %v), want %q", err, badinput.Is(err), want)
	}
}

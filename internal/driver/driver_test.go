package driver

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

type stubDriver struct{}

func (stubDriver) Open(context.Context, Target, Options) (DB, error) { return nil, nil }

func init() { Register("stub", stubDriver{}, "stubdb") }

func TestParseTarget(t *testing.T) {
	tests := []struct {
		raw, password    string
		driver, redacted string
		wantPassword     string
	}{
		{"stub://u:secret@127.0.0.1:5/db", "", "stub", "stub://u:xxxxx@127.0.0.1:5/db", "secret"},
		{"stubdb://u@h/db", "fromenv", "stub", "stubdb://u@h/db", "fromenv"},
		{"STUB://u:p%40ss@h/db?password=also", "", "stub", "stub://u:xxxxx@h/db?password=xxxxx", "p@ss"},
		{"stub://u@h/db?password=inquery", "", "stub", "stub://u@h/db?password=xxxxx", "inquery"},
		{"stub", "", "stub", "stub", ""},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			target, err := ParseTarget(tt.raw, tt.password)
			if err != nil {
				t.Fatal(err)
			}
			if target.Driver != tt.driver || target.Redacted() != tt.redacted || target.Password != tt.wantPassword {
				t.Fatalf("got driver %q, redacted %q, password %q", target.Driver, target.Redacted(), target.Password)
			}
		})
	}
}

func TestParseTargetBadInput(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"", "--db is empty"},
		{"oracle://u:hunter2@h/x", "unknown database"},
		{"stub://u:hunter2@[::1", "not a valid URL"},
		{"://u:hunter2@h", "not a valid URL"},
		// A password of digits then a / ? or # reads as a port.
		{"stub://u:2025/hunter2@h/db", "must be escaped"},
		{"stub://u:2025?hunter2@h/db", "must be escaped"},
		{"stub://u:2025#hunter2@h/db", "must be escaped"},
		{"stub://:2025/hunter2@h/db", "must be escaped"},
		// The port the url package quotes holds an escaped quote: the
		// password after it is still inside the quoted piece.
		{`stub://u:2025"hunter2#@h/db`, "(invalid port after host)"},
		// An @ then a # in the password: its middle reads as the host.
		{"stub://u:x@hunter2#y@h/db", "does not parse as scheme://user:password@host"},
		// Quoted as given, not with the colon a bare name is read with.
		{"sqlite//bad", `--db "sqlite//bad" has no scheme`},
		// A bare word is quoted as typed, not as the scheme "url://…".
		{"URL", `--db "URL": unknown database "url"`},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			_, err := ParseTarget(tt.raw, "")
			if !badinput.Is(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want bad input containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "2025") {
				t.Fatalf("the password is in the message: %v", err)
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	if _, name, err := Lookup("stubdb"); err != nil || name != "stub" {
		t.Fatalf("Lookup(stubdb) = %q, %v", name, err)
	}
	_, _, err := Lookup("nosuch")
	if err == nil || !strings.Contains(err.Error(), "stubdb") {
		t.Fatalf("Lookup of an unknown scheme should list the known ones: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("registering a name twice did not panic")
		}
	}()
	Register("stub", stubDriver{})
}

func TestClassification(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		err                      error
		retry, connLost, timeout bool
		code                     string
	}{
		{Classify(base, "40001", ClassConflict), true, false, false, "40001"},
		{Classify(base, "5", ClassBusy), true, false, false, "5"},
		{Classify(base, "40613", ClassTransient), true, false, false, "40613"},
		{Classify(base, "08006", ClassConnLost), false, true, false, "08006"},
		{Classify(base, "57014", ClassTimeout), false, false, true, "57014"},
		{Classify(base, "23505", ClassOther), false, false, false, "23505"},
		{base, false, false, false, ""},
		{ErrNotFound, false, false, false, ""},
	}
	for _, tt := range tests {
		if IsRetryable(tt.err) != tt.retry || IsConnLost(tt.err) != tt.connLost || IsTimeout(tt.err) != tt.timeout || Code(tt.err) != tt.code {
			t.Errorf("%v: retryable %v connlost %v timeout %v code %q", tt.err, IsRetryable(tt.err), IsConnLost(tt.err), IsTimeout(tt.err), Code(tt.err))
		}
	}
	if got := ClassTransient.String(); got != "transient" {
		t.Errorf("ClassTransient.String() = %q", got)
	}
	if Classify(nil, "x", ClassOther) != nil {
		t.Error("Classify(nil) is not nil")
	}
}

func FuzzParseTarget(f *testing.F) {
	f.Add("postgres://user:pw@127.0.0.1:5432/db?sslmode=disable")
	f.Add("stub://u:pa:ss@h")
	f.Add("sqlite:///tmp/x.db")
	f.Fuzz(func(t *testing.T, raw string) {
		target, err := ParseTarget(raw, "")
		if err != nil {
			if !badinput.Is(err) {
				t.Fatalf("error is not bad input: %v", err)
			}
			return
		}
		if target.Password != "" && len(target.Password) >= 4 && strings.Contains(target.Redacted(), target.Password) {
			t.Fatalf("Redacted %q shows the password %q", target.Redacted(), target.Password)
		}
	})
}

// FuzzParseTargetPassword writes a password into a --db value as a user
// types it, unescaped, so that the value often fails to parse: neither the
// refusal nor the redacted URL may give the password away.
func FuzzParseTargetPassword(f *testing.F) {
	f.Add("postgres", "u", "pw", "127.0.0.1:5432/db")
	f.Add("stub", "u", "pa/ss", "h/db")
	f.Add("stub", "u", "p%zz", "h")
	f.Add("stub", "u", "p#w", "h:1/db?x=1")
	f.Add("stub", "", "pw", "[::1")
	f.Add("oracle", "u", "pw", "h/x")
	f.Fuzz(func(t *testing.T, scheme, user, password, rest string) {
		secret := "Pw9" + password
		if strings.Contains(scheme+user+rest, "Pw9") {
			return // the text around would hold the password's words
		}
		raw := scheme + "://" + user + ":" + secret + "@" + rest
		target, err := ParseTarget(raw, "")
		if err != nil {
			if !badinput.Is(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseTarget: %q is not one line of bad input", err)
			}
			if strings.Contains(err.Error(), secret) || (Target{Password: secret}).Reveals(err.Error()) {
				t.Fatalf("ParseTarget(%q): the message gives the password away: %q", raw, err)
			}
			return
		}
		if target.Password == secret && target.Reveals(target.Redacted()) {
			t.Fatalf("Redacted %q shows the password %q", target.Redacted(), secret)
		}
	})
}

func TestCheckTLS(t *testing.T) {
	remote := []TLSRoute{{Host: "db.example.com", Level: TLSRequire}}
	for _, tc := range []struct {
		routes []TLSRoute
		allow  bool
		want   string // "" for a refusal
	}{
		{[]TLSRoute{{"db.example.com", TLSVerifyFull}}, false, "verify-full"},
		{[]TLSRoute{{"127.0.0.1", TLSOff}}, false, "off (loopback)"},
		{[]TLSRoute{{"/tmp", TLSOff}, {"::1", TLSRequire}}, false, "off (loopback)"},
		{[]TLSRoute{{"127.0.0.1", TLSOff}, {"db.example.com", TLSVerifyFull}}, false, "off (loopback)"},
		{remote, false, ""},
		{remote, true, "require (--allow-insecure-tls)"},
		{[]TLSRoute{{"127.0.0.1", TLSOff}, {"db.example.com", TLSVerifyCA}}, false, ""},
		{[]TLSRoute{{"10.0.0.1", TLSPreferred}}, false, ""},
		{nil, false, ""},
	} {
		target := Target{URL: &url.URL{Scheme: "stub", Host: "h", User: url.UserPassword("u", "hunter2")}, Password: "hunter2", AllowInsecureTLS: tc.allow}
		got, err := target.CheckTLS(tc.routes, "set verify=full")
		if got != tc.want {
			t.Errorf("CheckTLS(%+v, allow %v) = %q, %v; want %q", tc.routes, tc.allow, got, err, tc.want)
		}
		if tc.want == "" && len(tc.routes) > 0 {
			if !badinput.Is(err) || !strings.Contains(err.Error(), "set verify=full, or add --allow-insecure-tls") || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("refusal %v: want bad input naming the fix and the flag, without the password", err)
			}
		}
	}
}

// A --db value is shown back with its password replaced; one that does
// not parse as ParseTarget reads it, by its scheme alone.
func TestRedactURL(t *testing.T) {
	for raw, want := range map[string]string{
		"postgres://bob:S3cret@127.0.0.1/db":                 "postgres://bob:xxxxx@127.0.0.1/db",
		"postgres://bob@127.0.0.1/db?password=S3cret&x=1":    "postgres://bob@127.0.0.1/db?password=xxxxx&x=1",
		"mysql://root:o@127.0.0.1:1/x":                       "mysql://root:xxxxx@127.0.0.1:1/x",
		"sqlite:///tmp/bench.db":                             "sqlite:///tmp/bench.db",
		"null":                                               "null",
		"stub://u:2025/S3cret@h/db":                          "stub:…", // the password reads as a port and a path
		"stub://u:S3c#ret@h/db":                              "stub:…",
		"stub://u:S3c%zzret@h/db":                            "stub:…",
		"://u:S3cret@h":                                      "…",
		"postgres://u:p%40ss@h/db":                           "postgres://u:xxxxx@h/db",
		"redis://:S3cret@127.0.0.1:6379/0":                   "redis://:xxxxx@127.0.0.1:6379/0",
		"sqlserver://sa:S3cret@h:1433?database=b&encrypt=no": "sqlserver://sa:xxxxx@h:1433?database=b&encrypt=no",
	} {
		if got := RedactURL(raw); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestLabelPutsTheCodeFirst(t *testing.T) {
	base := errors.New("could not extend file")
	for _, c := range []struct {
		err  error
		want string
	}{
		{ClassifyNamed(base, "53100", "disk_full", ClassFatal), "53100 disk_full"},
		{Classify(base, "40001", ClassConflict), "40001"},
		{base, ""},
		{ClassifyNamed(base, "", "disk_full", ClassFatal), ""},
	} {
		if got := Label(c.err); got != c.want {
			t.Errorf("Label(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	if !IsFatal(ClassifyNamed(base, "13", "SQLITE_FULL", ClassFatal)) || IsRetryable(ClassifyNamed(base, "13", "SQLITE_FULL", ClassFatal)) {
		t.Error("a fatal error must be fatal and not retryable")
	}
	if ClassFatal.String() != "fatal" {
		t.Errorf("ClassFatal.String() = %q", ClassFatal.String())
	}
}

func TestConnectionRoomFree(t *testing.T) {
	if got := (ConnectionRoom{Max: 97, InUse: 3}).Free(); got != 94 {
		t.Errorf("Free = %d, want 94", got)
	}
	if got := (ConnectionRoom{Max: 10, InUse: 12}).Free(); got != 0 {
		t.Errorf("Free over the limit = %d, want 0", got)
	}
}

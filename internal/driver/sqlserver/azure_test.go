package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"

	"github.com/dbprobe/dbprobe/internal/badinput"
	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
)

// unavailable is the login error of a database that is not currently
// available, as go-mssqldb reports it.
var unavailable = mssql.Error{Number: 40613, Message: "login error: Database 'bench' on server 'x' is not currently available. Please retry the connection later."}

// TestReadStateRetrying: Open waits for a database that answers 40613, with
// doubling waits inside a budget, and stops at once on any other answer.
func TestReadStateRetrying(t *testing.T) {
	for _, tc := range []struct {
		name      string
		answers   []error // one per try; the last repeats
		wantTries int
		wantWaits []time.Duration
		wantErr   error
	}{
		{"available", []error{nil}, 1, nil, nil},
		{"resumes on the third try", []error{unavailable, unavailable, nil}, 3, []time.Duration{2 * time.Second, 4 * time.Second}, nil},
		{"other errors are not waited on", []error{mssql.Error{Number: 18456}}, 1, nil, mssql.Error{Number: 18456}},
		{"unavailable, then refused", []error{unavailable, mssql.Error{Number: 18456}}, 2, []time.Duration{2 * time.Second}, mssql.Error{Number: 18456}},
		{"never available: bounded", []error{unavailable}, 7,
			[]time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 15 * time.Second, 15 * time.Second, 15 * time.Second}, unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			var waits []time.Duration
			read := func(context.Context) (dbState, error) {
				err := tc.answers[min(tries, len(tc.answers)-1)]
				tries++
				return dbState{database: "bench"}, err
			}
			sleep := func(_ context.Context, d time.Duration) bool { waits = append(waits, d); return true }
			_, n, waited, err := readStateRetrying(context.Background(), read, sleep)
			if n != tc.wantTries || n != tries || fmt.Sprint(waits) != fmt.Sprint(tc.wantWaits) {
				t.Errorf("%d tries (%d reads), waits %v; want %d tries, waits %v", n, tries, waits, tc.wantTries, tc.wantWaits)
			}
			var sum time.Duration
			for _, w := range waits {
				sum += w
			}
			if waited != sum || waited > unavailableBudget {
				t.Errorf("waited %v, sum of waits %v, budget %v", waited, sum, unavailableBudget)
			}
			if !wraps(err, tc.wantErr) && (err != nil || tc.wantErr != nil) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
	// A context that ends stops the waiting.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, n, _, err := readStateRetrying(ctx, func(context.Context) (dbState, error) { return dbState{}, unavailable }, sleepCtx)
	if n != 1 || !wraps(err, unavailable) {
		t.Errorf("ended context: %d tries, %v", n, err)
	}
}

func TestUnavailableError(t *testing.T) {
	cfg := connConfig{database: "bench", addr: "srv.database.windows.net:1433"}
	err := unavailableError(fmt.Errorf("login: %w", unavailable), cfg, 7, 59*time.Second)
	want := `Azure SQL database "bench" at srv.database.windows.net:1433 is not currently available (error 40613: a failover, a scaling operation or a serverless database resuming); ` +
		"still so after 7 tries over 59s: run again in a few minutes, or look at the database's state in the Azure portal"
	if err == nil || err.Error() != want {
		t.Fatalf("unavailableError =\n %v\nwant\n %s", err, want)
	}
	if badinput.Is(err) || dbdriver.Code(err) != "40613" || !wraps(err, unavailable) {
		t.Errorf("bad input %v, code %q, wraps %v: want a run failure carrying 40613", badinput.Is(err), dbdriver.Code(err), wraps(err, unavailable))
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("several lines: %q", err)
	}
	if unavailableError(mssql.Error{Number: 18456}, cfg, 1, 0) != nil || unavailableError(errors.New("x"), cfg, 1, 0) != nil {
		t.Error("unavailableError took another error for 40613")
	}
}

// TestTransientReplacesConnection: a server answering 40613 (or another
// transient error) gets a retryable error, and the next operation, the
// runner's retry, runs on a new connection.
func TestTransientReplacesConnection(t *testing.T) {
	for _, n := range []int32{40613, 40197, 40501} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			f := newFakeServer(t)
			calls := 0
			f.answer = func(rpcCall) []byte {
				calls++
				if calls == 1 {
					return errorDone(n, "transient")
				}
				return nil
			}
			db := f.db(dbdriver.Options{Sessions: 1})
			ctx := context.Background()
			sess, err := db.Session(ctx, testTable(1))
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			err = sess.Update(ctx, []byte("user1"), nil, [][]byte{[]byte("v")})
			if dbdriver.ClassOf(err) != dbdriver.ClassTransient || !dbdriver.IsRetryable(err) || dbdriver.Code(err) != fmt.Sprint(n) {
				t.Fatalf("first update: %v (class %v, code %q), want a retryable transient %d", err, dbdriver.ClassOf(err), dbdriver.Code(err), n)
			}
			if err := sess.Update(ctx, []byte("user1"), nil, [][]byte{[]byte("v")}); err != nil {
				t.Fatalf("retry: %v", err)
			}
			f.mu.Lock()
			logins := f.logins
			f.mu.Unlock()
			if logins != 2 {
				t.Errorf("%d logins, want 2: the retry must run on a new connection", logins)
			}
		})
	}
}

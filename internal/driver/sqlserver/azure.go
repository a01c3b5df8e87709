package sqlserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/microsoft/go-mssqldb/azuread"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// Azure SQL error numbers with a treatment of their own.
const (
	// errDatabaseUnavailable is 40613: the database is not currently
	// available (a failover, a scaling operation, a serverless database
	// resuming). Transient during a run; retried for a while at Open.
	errDatabaseUnavailable = 40613
	// errXTPQuotaDatabase and errXTPQuotaPool are 41823 and 41840: the
	// In-Memory OLTP storage quota of the database (or Managed Instance)
	// and of the elastic pool is reached, which is how a memory-optimized
	// load ends on Premium and Business Critical.
	errXTPQuotaDatabase = 41823
	errXTPQuotaPool     = 41840
)

// azureError is an Azure SQL failure told in dbprobe's words: its message
// names what happened and what to do, the server's error is its cause
// (for errors.As, the class and the code), never printed with it.
type azureError struct {
	msg string
	err error
}

func (e *azureError) Error() string { return e.msg }
func (e *azureError) Unwrap() error { return e.err }

// quotaError returns the error for an In-Memory OLTP quota number, nil for
// any other. It is fatal (classOfNumber): the quota is the service tier's,
// and a load that reached it fails at every repeat. Microsoft notes the
// rare case where a first 41823 passes; stopping there costs a run that
// --on-error continue would have let go on.
func quotaError(n int32, classified error) error {
	var whose string
	switch n {
	case errXTPQuotaDatabase:
		whose = "the database's"
	case errXTPQuotaPool:
		whose = "the elastic pool's"
	default:
		return nil
	}
	return &azureError{
		msg: fmt.Sprintf("Azure SQL: %s In-Memory OLTP storage quota is reached (error %d): memory-optimized rows, indexes and row versions fill the memory the service tier sets aside for them; "+
			"watch xtp_storage_percent, load fewer rows, scale to a larger Premium or Business Critical objective, or use table type disk", whose, n),
		err: classified,
	}
}

// How long Open waits for a database that is not currently available
// (40613): a failover or a scaling operation ends in seconds to tens of
// seconds, a serverless database resumes in about a minute. The waits
// double from unavailableFirstWait up to unavailableMaxWait each, and stop
// once they would pass unavailableBudget in all.
const (
	unavailableFirstWait = 2 * time.Second
	unavailableMaxWait   = 15 * time.Second
	unavailableBudget    = 60 * time.Second
)

// readStateRetrying runs read until it succeeds, fails otherwise than with
// 40613, or the waits between tries would pass unavailableBudget; sleep
// waits (false when ctx ended first). It returns the last answer, how
// many tries were made and how long it waited in all.
func readStateRetrying(ctx context.Context, read func(context.Context) (dbState, error),
	sleep func(context.Context, time.Duration) bool) (dbState, int, time.Duration, error) {
	var waited time.Duration
	wait := unavailableFirstWait
	for tries := 1; ; tries++ {
		st, err := read(ctx)
		if err == nil || !anyNumber(err, func(n int32) bool { return n == errDatabaseUnavailable }) ||
			waited+wait > unavailableBudget || !sleep(ctx, wait) {
			return st, tries, waited, err
		}
		waited += wait
		wait = min(2*wait, unavailableMaxWait)
	}
}

// sleepCtx waits d, or until ctx ends: it reports whether it waited.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// unavailableError is Open's error for a database still not available
// (40613) after readStateRetrying gave up: not the user's input, so a run
// failure, in one line that says what is going on.
func unavailableError(err error, c connConfig, tries int, waited time.Duration) error {
	if !anyNumber(err, func(n int32) bool { return n == errDatabaseUnavailable }) {
		return nil
	}
	return &azureError{
		msg: fmt.Sprintf("Azure SQL database %q at %s is not currently available (error 40613: a failover, a scaling operation or a serverless database resuming); "+
			"still so after %d tries over %s: run again in a few minutes, or look at the database's state in the Azure portal", c.database, c.addr, tries, waited),
		err: classify(err),
	}
}

// checkFedAuth refuses, at parse time, the Entra ID methods go-mssqldb
// v1.11 will not run as the user wrote them: get reads a URL option, shown
// is the URL without its password.
//
// ActiveDirectoryPassword and ActiveDirectoryInteractive need the client
// ID of an application registered in the tenant (applicationclientid=):
// without it the azuread package refuses the URL with a message that does
// not say where the ID comes from. ActiveDirectoryIntegrated is not
// integrated (Kerberos, Windows) sign-in there: the azuread package runs
// DefaultAzureCredential for it, so a run would sign in as whatever
// identity the environment, a managed identity or the Azure CLI holds.
func checkFedAuth(method string, get func(string) string, shown string) error {
	switch method {
	case azuread.ActiveDirectoryPassword, azuread.ActiveDirectoryInteractive:
		if strings.TrimSpace(get("applicationclientid")) == "" {
			return badinput.New("--db %s: fedauth=%s needs applicationclientid= (the application (client) ID of an app registration in your Entra ID tenant that may sign users in to Azure SQL); "+
				"add &applicationclientid=ID, or use fedauth=ActiveDirectoryDefault", shown, method)
		}
	case azuread.ActiveDirectoryIntegrated:
		return badinput.New("--db %s: fedauth=ActiveDirectoryIntegrated is not integrated sign-in in go-mssqldb v1.11: it runs ActiveDirectoryDefault (environment, workload or managed identity, Azure CLI) in its place; "+
			"write fedauth=ActiveDirectoryDefault to use that, or name the method you mean (ActiveDirectoryAzCli, ActiveDirectoryManagedIdentity, …)", shown)
	}
	return nil
}

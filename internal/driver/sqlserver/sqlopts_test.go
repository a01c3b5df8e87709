package sqlserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	dbdriver "github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// sqlTextStatements are the statements of plans, costs and a table's
// file, for TestGolden.
func sqlTextStatements() []statement {
	return []statement{
		{"plan", showplanOn + "\n" + showplanOff},
		{"plan, analyzed", statisticsOn + "\n" + beginTransaction + "\n" + rollbackIfOpen + "\n" + statisticsOf},
		{"statement costs", statementCostsSQL},
		{"database costs", databaseCostsSQL},
		{"table path", tablePathSQL},
	}
}

// The requests of SQL text's options as they leave go-mssqldb: Setup runs
// on a new connection, Fresh logs in each time, and a plan is the
// statement sent between SET SHOWPLAN_TEXT ON and OFF (with analyze,
// STATISTICS XML around a transaction rolled back).
func TestSQLTextRequests(t *testing.T) {
	f := newFakeServer(t)
	db := f.db(dbdriver.Options{Sessions: 1})
	ctx := context.Background()
	logins := func() int {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.logins
	}

	if _, err := db.SQLConn(ctx, dbdriver.SQLOptions{Simple: true}); !badinput.Is(err) || !strings.Contains(err.Error(), noSimple) {
		t.Errorf("a simple connection: %v", err)
	}
	was := logins()
	c, err := db.SQLConn(ctx, dbdriver.SQLOptions{Setup: []string{"SET LOCK_TIMEOUT 500", "SET ARITHABORT ON"}})
	if err != nil {
		t.Fatal(err)
	}
	if logins() != was+1 {
		t.Errorf("a connection with setup did not log in anew")
	}
	batches := f.batchesSeen()
	if i := slices.Index(batches, "SET LOCK_TIMEOUT 500"); i < 0 || i+1 >= len(batches) || batches[i+1] != "SET ARITHABORT ON" {
		t.Errorf("the setup was not sent in order: %q", batches)
	}
	st, err := c.Prepare(ctx, "SELECT id FROM t WHERE id = :id OR id = :id")
	if err != nil {
		t.Fatal(err)
	}
	x := c.(dbdriver.Explainer)
	for _, analyze := range []bool{false, true} {
		before := len(f.batchesSeen())
		calls := len(f.executed())
		plan, err := x.Explain(ctx, st, []any{7}, analyze)
		if err != nil {
			t.Fatalf("Explain(analyze %v): %v", analyze, err)
		}
		want := []string{showplanOn, showplanOff}
		if analyze {
			want = []string{statisticsOn, beginTransaction, rollbackIfOpen, statisticsOf}
		}
		if got := f.batchesSeen()[before:]; !slices.Equal(got, want) {
			t.Errorf("analyze %v: batches %q, want %q", analyze, got, want)
		}
		if got := f.executed()[calls:]; len(got) != 1 || got[0][0] != "SELECT id FROM t WHERE id = @p1 OR id = @p1" {
			t.Errorf("analyze %v: statements sent %q", analyze, got)
		}
		if !strings.HasPrefix(plan.How, "SET ") {
			t.Errorf("analyze %v: How = %q", analyze, plan.How)
		}
	}
	c.Close()
	if n := db.opener().Open(); n != 0 {
		t.Errorf("%d connections with setup still open after Close", n)
	}
	for i := range 2 {
		was := logins()
		fc, err := db.SQLConn(ctx, dbdriver.SQLOptions{Fresh: true})
		if err != nil {
			t.Fatal(err)
		}
		if logins() != was+1 {
			t.Errorf("fresh connection %d did not log in", i)
		}
		fc.Close()
	}
	if n := db.opener().Open(); n != 0 {
		t.Errorf("%d fresh connections still open after Close", n)
	}
}

func TestCapabilitiesSayWhy(t *testing.T) {
	f := newFakeServer(t)
	db := f.db(dbdriver.Options{Sessions: 1})
	if err := dbdriver.CheckDescription(db); err != nil {
		t.Fatal(err)
	}
	c := db.Capabilities()
	for cap, want := range map[dbdriver.Capability]string{
		dbdriver.CapSimpleProtocol: "SQL Server has no simple query protocol: " + noSimple,
		dbdriver.CapTempPlace:      "SQL Server has no temporary files on a directory: " + noTempPlace,
	} {
		if err := c.Need(cap); !badinput.Is(err) || err.Error() != want {
			t.Errorf("Need(%s) = %v, want %q", cap, err, want)
		}
	}
}

// TestSQLTextAgainstServer checks plans, costs and a table's file on a
// real server (DBPROBE_SQLSERVER_URL): sys.dm_exec_query_stats counts a
// statement as often as it ran, a DELETE analyzed leaves its rows.
func TestSQLTextAgainstServer(t *testing.T) {
	u := testdb.SQLServerURL(t)
	target, err := dbdriver.ParseTarget(u, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := Driver{}.Open(ctx, target, dbdriver.Options{Sessions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	db := d.(*DB)
	tbl := dbdriver.DataTable{Name: fmt.Sprintf("dbprobe_sqltext_%d", time.Now().UnixNano()), PayloadBytes: 100}
	defer db.DropDataTable(context.Background(), tbl)
	if err := db.CreateDataTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FillTable(ctx, tbl, 1, 100); err != nil {
		t.Fatal(err)
	}
	if path, err := db.TablePath(ctx, tbl); err != nil || path == "" {
		t.Errorf("TablePath = %q, %v", path, err)
	}
	c, err := db.SQLConn(ctx, dbdriver.SQLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	text := "SELECT payload FROM " + tbl.Name + " WHERE id = :id"
	before, err := db.Costs(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Prepare(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := c.Run(ctx, st, []any{int64(i + 1)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	after, err := db.Costs(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Statements[0].Sub(before.Statements[0]); d.Calls != 5 || d.Rows != 5 || d.LogicalReads <= 0 {
		t.Errorf("statement costs: %+v (notes %q)", d, after.Notes)
	}
	x := c.(dbdriver.Explainer)
	if plan, err := x.Explain(ctx, st, []any{int64(1)}, false); err != nil || !strings.Contains(plan.Text, "Clustered Index Seek") {
		t.Errorf("Explain = %+v, %v", plan, err)
	}
	del, err := c.Prepare(ctx, "DELETE FROM "+tbl.Name+" WHERE id >= :id")
	if err != nil {
		t.Fatal(err)
	}
	if plan, err := x.Explain(ctx, del, []any{int64(50)}, true); err != nil || !strings.Contains(plan.Text, "ShowPlanXML") {
		t.Errorf("Explain with analyze = %+v, %v", plan, err)
	}
	cnt, err := c.Prepare(ctx, "SELECT COUNT(*) FROM "+tbl.Name)
	if err != nil {
		t.Fatal(err)
	}
	var n any
	if _, err := c.Run(ctx, cnt, nil, func(row []any) error { n = row[0]; return nil }); err != nil || fmt.Sprint(n) != "100" {
		t.Errorf("%v rows after a DELETE analyzed, want 100 (%v)", n, err)
	}
}

// The buffer pool's bound is the smaller of the two figures.
func TestCacheSizeOf(t *testing.T) {
	if c := cacheSizeOf(2147483647<<20, 4<<30); c.Bytes != 4<<30 || !strings.Contains(c.How, "committed target = 4096 MB") {
		t.Errorf("the default max server memory on a 4 GB machine: %+v", c)
	}
	if c := cacheSizeOf(2<<30, 16<<30); c.Bytes != 2<<30 {
		t.Errorf("max server memory 2 GB: %+v", c)
	}
}

package redis

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/testdb"
)

// A plain InsertBatch whose keys another client writes between the WATCHed
// checks and EXEC fails as a retryable conflict and writes nothing; run
// again, it meets the other client's record as a duplicate.
func TestWatchBatchConflict(t *testing.T) {
	u := testdb.FreshRedisDatabase(t)
	target, err := driver.ParseTarget(u, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := Driver{}.Open(ctx, target, driver.Options{Sessions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl := driver.Table{Name: "usertable", KeyColumn: "YCSB_KEY", KeyLength: 255, FieldLength: 100, Fields: []string{"FIELD0", "FIELD1"}}
	if err := db.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	ds, err := db.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	s := ds.(*session)
	other, err := db.Session(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}

	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	values := make([][][]byte, len(keys))
	for i, k := range keys {
		values[i] = [][]byte{[]byte(fmt.Sprintf("%s-0", k)), []byte(fmt.Sprintf("%s-1", k))}
	}
	s.beforeExec = func() {
		if err := other.Insert(ctx, []byte("b"), [][]byte{[]byte("theirs"), []byte("theirs")}); err != nil {
			t.Errorf("the other session's Insert: %v", err)
		}
	}
	err = s.InsertBatch(ctx, keys, values)
	if !driver.IsRetryable(err) || driver.ClassOf(err) != driver.ClassConflict || driver.Code(err) != codeWatch {
		t.Fatalf("batch whose key was written meanwhile: %v (class %v, code %q), want a conflict with code %s",
			err, driver.ClassOf(err), driver.Code(err), codeWatch)
	}
	c := testdb.OpenRedis(t, u)
	if n, err := redis.Int(c.Do(ctx, "EXISTS", "usertable:a", "usertable:c")); err != nil || n != 0 {
		t.Fatalf("%d records of the aborted batch were written (%v)", n, err)
	}
	if card, err := redis.Int(c.Do(ctx, "ZCARD", "usertable#index")); err != nil || card != 1 {
		t.Fatalf("index holds %d keys (%v), want only the other session's", card, err)
	}

	s.beforeExec = nil
	err = s.InsertBatch(ctx, keys, values)
	if driver.Code(err) != codeExists || driver.IsRetryable(err) {
		t.Fatalf("the batch run again: %v (code %q), want the duplicate reported", err, driver.Code(err))
	}
	if err := s.InsertBatch(ctx, [][]byte{keys[0], keys[2]}, [][][]byte{values[0], values[2]}); err != nil {
		t.Fatalf("the batch without the other's key: %v", err)
	}
	got := [][]byte{nil, nil}
	if err := s.Read(ctx, []byte("c"), nil, got); err != nil || string(got[0]) != "c-0" || string(got[1]) != "c-1" {
		t.Fatalf("Read c = %q, %v", got, err)
	}
}

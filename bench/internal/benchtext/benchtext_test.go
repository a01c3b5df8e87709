package benchtext

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	out := "# dbprobe header\n[OVERALL], Throughput(ops/sec), 98.5\n[READ], Operations, 500\n[READ], Return=OK, 500\nnot a line\n"
	v := Parse([]byte(out))
	if v["OVERALL"]["Throughput(ops/sec)"] != 98.5 || v["READ"]["Operations"] != 500 || len(v) != 2 {
		t.Fatalf("Parse = %v", v)
	}
}

func TestRedact(t *testing.T) {
	got := Redact("dbprobe run --db mysql://u:s3cret@127.0.0.1:3306/db; sysbench --mysql-password=s3cret; redis-benchmark -a s3cret -p 1")
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "mysql://u:xxxxx@127.0.0.1") {
		t.Fatalf("Redact = %q", got)
	}
}

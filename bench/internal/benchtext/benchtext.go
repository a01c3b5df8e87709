// Package benchtext holds what the benchmark programs under bench/ share
// when they read dbprobe's output and report failures: parsing YCSB's text
// results, and keeping passwords out of what they print.
package benchtext

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"
	"strings"
)

// Parse reads YCSB text output ("[READ], AverageLatency(us), 33.9") into
// section → metric → value; comment lines and anything else are skipped.
func Parse(out []byte) map[string]map[string]float64 {
	vals := map[string]map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		parts := strings.Split(sc.Text(), ", ")
		if len(parts) != 3 || !strings.HasPrefix(parts[0], "[") {
			continue
		}
		v, _ := strconv.ParseFloat(parts[2], 64)
		sec := strings.Trim(parts[0], "[]")
		if vals[sec] == nil {
			vals[sec] = map[string]float64{}
		}
		vals[sec][parts[1]] = v
	}
	return vals
}

var (
	urlPassword  = regexp.MustCompile(`://([^:@/\s]*):[^@\s]*@`)
	flagPassword = regexp.MustCompile(`(--mysql-password=|-a )\S+`)
)

// Redact hides the passwords that the benchmarks' command lines carry: in
// database URLs, sysbench's --mysql-password= and redis-benchmark's -a.
func Redact(msg string) string {
	msg = urlPassword.ReplaceAllString(msg, "://$1:xxxxx@")
	return flagPassword.ReplaceAllString(msg, "${1}xxxxx")
}

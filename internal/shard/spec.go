package shard

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// Open is the Last of a range that has no upper bound ("URL@FIRST-").
const Open = int64(-1)

// Spec is one shard as the user wrote it: a database URL and, when
// Bounded, the records First … Last (inclusive; Last may be Open); Read is
// the URL of a replica of it that the run's reads go to ("" for none).
type Spec struct {
	URL     string
	Bounded bool
	First   int64
	Last    int64
	Read    string
}

// readPrefix starts the optional second word of a --shard value.
const readPrefix = "read="

// ParseSpec reads one --shard value: URL, or URL@FIRST-LAST with record
// numbers (LAST may be left out: no upper bound), optionally followed by
// a space and read=REPLICA_URL. The bounds are the text after the URL's
// last "@" when it is two numbers joined by "-"; a URL whose host would
// read that way (user@1-2) needs a port or a path. A URL holds no space
// (it would be %20), so a space parts the words.
func ParseSpec(s string) (Spec, error) {
	words := strings.Fields(s)
	if len(words) == 0 {
		return Spec{}, badinput.New("--shard is empty; give a database URL, optionally with @FIRST-LAST record numbers")
	}
	var read string
	switch {
	case len(words) == 2 && strings.HasPrefix(words[1], readPrefix) && len(words[1]) > len(readPrefix):
		read = strings.TrimPrefix(words[1], readPrefix)
	case len(words) > 1:
		shownWords := make([]string, len(words))
		for i, w := range words {
			// Each word may be a URL with its password.
			key, url, ok := strings.Cut(w, "=")
			if i > 0 && ok {
				shownWords[i] = shown(key) + "=" + shown(url)
			} else {
				shownWords[i] = shown(w)
			}
		}
		return Spec{}, badinput.New("--shard %s: after the URL (and its @FIRST-LAST) only read=REPLICA_URL may follow, separated by a space", strings.Join(shownWords, " "))
	}
	sp, err := parseBounds(words[0])
	sp.Read = read
	return sp, err
}

// parseBounds reads URL or URL@FIRST-LAST.
func parseBounds(s string) (Spec, error) {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return Spec{URL: s}, nil
	}
	suffix := s[at+1:]
	if strings.Trim(suffix, "0123456789-") != "" {
		return Spec{URL: s}, nil // an @ of the URL's user information
	}
	lo, hi, ok := strings.Cut(suffix, "-")
	if !ok || !digits(lo) || (hi != "" && !digits(hi)) {
		// Only digits and dashes after the last @ (or nothing) is a
		// range mistyped, not a host: a SQLite file named b.db@ would
		// be created otherwise.
		return Spec{}, badinput.New("--shard %s@%s: write the record range as FIRST-LAST, or FIRST- for no upper bound", shown(s[:at]), suffix)
	}
	url := s[:at]
	first, err := strconv.ParseInt(lo, 10, 64)
	if err != nil {
		return Spec{}, badinput.New("--shard %s: record number %s is too large", shown(url), lo)
	}
	sp := Spec{URL: url, Bounded: true, First: first, Last: Open}
	if hi != "" {
		if sp.Last, err = strconv.ParseInt(hi, 10, 64); err != nil {
			return Spec{}, badinput.New("--shard %s: record number %s is too large", shown(url), hi)
		}
		if sp.Last < first {
			return Spec{}, badinput.New("--shard %s@%s-%s: the range ends before it starts; write FIRST-LAST with FIRST <= LAST", shown(url), lo, hi)
		}
	}
	if url == "" {
		return Spec{}, badinput.New("--shard @%s: no database URL before the record range", suffix)
	}
	return sp, nil
}

// shown is a URL for a message: its password hidden, and quoted when it
// holds control characters, so the message stays one line.
func shown(url string) string {
	r := driver.RedactURL(url)
	if strings.ContainsFunc(r, unicode.IsControl) {
		return strconv.Quote(r)
	}
	return r
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// ReadFile reads a shard list: one --shard value per line (URL, its
// optional @FIRST-LAST, and an optional read=REPLICA_URL column); blank
// lines and lines starting with # are skipped.
func ReadFile(path string) ([]Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, badinput.New("--shards-file %s: %v", path, err)
	}
	defer f.Close()
	var specs []Spec
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sp, err := ParseSpec(line)
		if err != nil {
			return nil, badinput.New("--shards-file %s line %d: %v", path, n, err)
		}
		specs = append(specs, sp)
	}
	if err := sc.Err(); err != nil {
		return nil, badinput.New("--shards-file %s: %v", path, err)
	}
	if len(specs) == 0 {
		return nil, badinput.New("--shards-file %s lists no database; write one URL (optionally URL@FIRST-LAST, and read=REPLICA_URL after a space) per line", path)
	}
	return specs, nil
}

// Range is the records a shard holds: First … Last inclusive, Last Open
// for no upper bound. Above the highest range's Last, records go to the
// shard holding it (see Plan).
type Range struct {
	First, Last int64
}

// String writes the range as the --shard suffix does: "0-499", "500-".
func (r Range) String() string {
	if r.Last == Open {
		return fmt.Sprintf("%d-", r.First)
	}
	return fmt.Sprintf("%d-%d", r.First, r.Last)
}

// Plan gives each spec its range over the records 0 … records-1. Without
// bounds the records are split evenly in list order and the last shard
// also takes every record above (the run phase's inserts). With bounds
// (all or none must have them) the ranges must cover 0 … records-1
// without overlap; records above the highest range go to its shard.
// Errors are bad input naming the records left out or held twice.
func Plan(specs []Spec, records int64) ([]Range, error) {
	if len(specs) == 0 {
		return nil, badinput.New("no shard given")
	}
	bounded := 0
	for _, s := range specs {
		if s.Bounded {
			bounded++
		}
	}
	ranges := make([]Range, len(specs))
	if bounded == 0 {
		k := int64(len(specs))
		if records < k {
			return nil, badinput.New("%d shards for recordcount=%d: every shard needs a record; give fewer shards or more records", k, records)
		}
		for i := range ranges {
			ranges[i] = Range{First: int64(i) * records / k, Last: (int64(i)+1)*records/k - 1}
		}
		ranges[len(ranges)-1].Last = Open
		return ranges, nil
	}
	if bounded != len(specs) {
		return nil, badinput.New("%d of %d --shard values have @FIRST-LAST bounds: give bounds to every shard or to none (an even split)", bounded, len(specs))
	}
	for i, s := range specs {
		ranges[i] = Range{First: s.First, Last: s.Last}
	}
	order := make([]int, len(specs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(sign(ranges[a].First - ranges[b].First)) })
	next := int64(0) // the first record not yet covered
	for n, i := range order {
		r := ranges[i]
		if r.First > next && next < records {
			return nil, badinput.New("records %d-%d are in no shard (recordcount=%d): make the --shard ranges cover 0-%d without gaps", next, min(r.First, records)-1, records, records-1)
		}
		if r.First < next {
			prev := order[n-1]
			return nil, badinput.New("shards %d (%s) and %d (%s) both hold records %d-%d: make the --shard ranges disjoint",
				prev+1, ranges[prev], i+1, r, r.First, min(next-1, lastOf(r)))
		}
		if r.Last == Open {
			next = maxRecord
		} else {
			next = r.Last + 1
		}
	}
	if next < records {
		return nil, badinput.New("records %d-%d are in no shard (recordcount=%d): make the --shard ranges cover 0-%d without gaps", next, records-1, records, records-1)
	}
	return ranges, nil
}

// maxRecord stands for "every record" after an open range.
const maxRecord = int64(1<<63 - 1)

func lastOf(r Range) int64 {
	if r.Last == Open {
		return maxRecord
	}
	return r.Last
}

func sign(x int64) int64 {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// Identity names the database a target reaches, so that a shard list
// that gives one database twice is refused: the driver, the host and port
// as written (lower case), and the database (URL path, or SQL Server's
// database= option). The null driver has no database and may repeat.
func Identity(t driver.Target) string {
	u := t.URL
	if u == nil || t.Driver == "null" {
		return ""
	}
	db := strings.Trim(u.Path, "/")
	if d := u.Query().Get("database"); d != "" {
		db = d
	}
	if u.Opaque != "" {
		db = u.Opaque
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || host == "::1" {
		host = "127.0.0.1" // the same server under its other names
	}
	return t.Driver + "://" + host + ":" + u.Port() + "/" + db
}

// CheckRepeats refuses a shard list in which two targets reach the same
// database (Identity): the same rows would be counted twice.
func CheckRepeats(targets []driver.Target) error {
	seen := map[string]int{}
	for i, t := range targets {
		id := Identity(t)
		if id == "" {
			continue
		}
		if j, ok := seen[id]; ok {
			return badinput.New("shards %d and %d are the same database (%s): give each shard its own database", j+1, i+1, t.Redacted())
		}
		seen[id] = i
	}
	return nil
}

package sqlgen

import (
	"fmt"
	"sort"
	"strings"
)

// Statement is one statement of a script, as Script cut it.
type Statement struct {
	// Text is the statement, without the separator that ended it and
	// without the blank lines and comments around it.
	Text string
	// Line is the line of the script Text starts on, from 1.
	Line int
}

// Script cuts text, a script a user wrote, into its statements by d's
// rules, as the database's own client would:
//
//   - A semicolon ends a statement, except inside a string, a quoted name,
//     a comment or a dollar quote (the lexing of Bind), and inside a
//     BEGIN … END block or a CASE … END: a trigger's, a procedure's or a
//     BEGIN ATOMIC function's body stays one statement. BEGIN opens a
//     block unless it starts a transaction: followed by a semicolon, the
//     end of the text or TRANSACTION, WORK, TRAN, DEFERRED, IMMEDIATE,
//     EXCLUSIVE, ISOLATION or READ; or the statement's first word, not
//     followed by NOT ATOMIC (MariaDB's block). Nor does it when it is a
//     column's name (followed by no word, or by FROM, AS, AND, …). In
//     PostgreSQL, whose procedural code is in strings, only BEGIN ATOMIC
//     opens a block. END IF, END LOOP, END WHILE, END REPEAT and END FOR
//     close what was not counted; END CASE closes a CASE; an END with
//     nothing open (PostgreSQL's and SQLite's COMMIT) closes nothing.
//   - With d.Batches (SQL Server), a line holding only GO, in any case,
//     with blanks or a comment after it, ends a batch, and semicolons end
//     nothing: a batch is one statement. GO with a count is refused.
//   - With d.Delimiters (MySQL), a line DELIMITER xx between statements
//     makes xx what ends them until the next DELIMITER line, as the mysql
//     client does; with a delimiter other than ; blocks are not counted
//     (xx ends a statement wherever it is outside strings and comments).
//     The DELIMITER line is not a statement.
//
// Blank statements and statements of comments only are left out, and so
// are the comments before and after a statement's text. A /*+ hint
// (pg_hint_plan's leads the statement) or a /*! executable comment
// (MySQL's; mysqldump writes statements of one) is not a comment here:
// it is kept, and is a statement even alone. A
// string, quoted name, comment, dollar quote or block left open at the end
// is an error naming the line it starts on, as is GO with a count or a
// DELIMITER line without one delimiter: every error is about the text.
func Script(d Dialect, text string) ([]Statement, error) {
	m, err := mask(d, text)
	if err != nil {
		return nil, err
	}
	s := &scanner{d: d, text: text, m: m, delim: ";"}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			s.lines = append(s.lines, i+1)
		}
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	return s.out, nil
}

// mask returns text with each comment blanked (its bytes made spaces) and
// each string, quoted name, dollar quote and kept comment made zero bytes,
// newlines kept: what is left is the code whose words and separators the
// scanner reads, at the same offsets as in text.
func mask(d Dialect, text string) (string, error) {
	m := []byte(text)
	other := func(start, end int) {
		fill := byte(0)
		if c := text[start]; (c == '-' || c == '#' || c == '/') && !kept(text[start:]) {
			fill = ' '
		}
		for i := start; i < end; i++ {
			if m[i] != '\n' {
				m[i] = fill
			}
		}
	}
	if err := split(d, text, func(int, int) {}, other); err != nil {
		return "", err
	}
	return string(m), nil
}

// kept reports whether the comment s starts with is one the server reads:
// an optimizer hint (/*+, pg_hint_plan's, which must lead the statement)
// or a MySQL/MariaDB executable comment (/*!, /*M!), which mysqldump
// writes as whole statements.
func kept(s string) bool {
	return strings.HasPrefix(s, "/*+") || strings.HasPrefix(s, "/*!") || strings.HasPrefix(s, "/*M!")
}

// transactionWords follow a BEGIN that starts a transaction rather than a
// block: PostgreSQL's BEGIN WORK, ISOLATION LEVEL, READ ONLY; SQLite's
// BEGIN DEFERRED, IMMEDIATE, EXCLUSIVE; SQL Server's BEGIN TRAN.
var transactionWords = map[string]bool{
	"TRANSACTION": true, "WORK": true, "TRAN": true, "DEFERRED": true, "IMMEDIATE": true,
	"EXCLUSIVE": true, "ISOLATION": true, "READ": true,
}

// nameFollowers come after a BEGIN that is a column's name (MySQL and
// SQLite let begin be one), never after one that opens a block.
var nameFollowers = map[string]bool{
	"FROM": true, "AS": true, "AND": true, "OR": true, "IS": true, "IN": true, "LIKE": true,
	"BETWEEN": true, "THEN": true, "WHERE": true,
}

// uncounted follow an END that closes a construct the scanner does not
// count (the semicolons inside it are inside a counted block anyway).
var uncounted = map[string]bool{"IF": true, "LOOP": true, "WHILE": true, "REPEAT": true, "FOR": true}

// block is a BEGIN or CASE not yet closed.
type block struct {
	what string
	line int
}

// scanner walks a script's mask, keeping the statement it is in.
type scanner struct {
	d     Dialect
	text  string
	m     string // mask(text)
	lines []int  // offsets at which lines 2, 3, … start
	delim string // what ends a statement
	out   []Statement

	start   int     // offset of the current statement
	started bool    // the current statement has code
	words   int     // words of the current statement so far
	prev    string  // its last word, upper case
	open    []block // its blocks not yet closed
}

func (s *scanner) run() error {
	m := s.m
	for i := 0; i < len(m); {
		if i == 0 || m[i-1] == '\n' {
			next, ok, err := s.command(i)
			if err != nil {
				return err
			}
			if ok {
				i = next
				continue
			}
		}
		c := m[i]
		switch {
		case s.d.Batches:
			// Only GO lines end a batch: the server parses the rest.
		case s.delim != ";":
			if strings.HasPrefix(m[i:], s.delim) {
				s.end(i)
				i += len(s.delim)
				s.begin(i)
				continue
			}
		case c == ';' && len(s.open) == 0:
			s.end(i)
			i++
			s.begin(i)
			continue
		case isNameStart(c) && (i == 0 || !isIdent(m[i-1]) && m[i-1] != '.' && m[i-1] != '@'):
			j := wordEnd(m, i)
			i = s.word(strings.ToUpper(m[i:j]), i, j)
			s.started = true
			continue
		}
		if !isSpace(c) {
			s.started = true
		}
		i++
	}
	s.end(len(m))
	if len(s.open) > 0 {
		b := s.open[0]
		return fmt.Errorf("a %s opened on line %d is not closed by its END", b.what, b.line)
	}
	return nil
}

// command reads the line that starts at offset i when it is a GO or a
// DELIMITER line: it ends the statement before it, and the scan goes on
// at next, the end of the line.
func (s *scanner) command(i int) (next int, ok bool, err error) {
	eol := strings.IndexByte(s.m[i:], '\n')
	if eol < 0 {
		eol = len(s.m)
	} else {
		eol += i
	}
	line := s.m[i:eol]
	f := strings.Fields(line)
	switch {
	case len(f) == 0:
		return 0, false, nil
	case s.d.Batches && strings.EqualFold(f[0], "GO") && len(f) <= 2:
		if len(f) == 2 {
			if strings.Trim(f[1], "0123456789") != "" {
				return 0, false, nil // not a GO line: the server will say what it is
			}
			return 0, false, fmt.Errorf("GO %s on line %d runs its batch %s times, which dbprobe does not do: write the batch out that many times", f[1], s.lineOf(i), f[1])
		}
		s.end(i)
		s.begin(eol)
		return eol, true, nil
	case s.d.Delimiters && !s.started && strings.EqualFold(f[0], "DELIMITER"):
		if len(f) != 2 {
			return 0, false, fmt.Errorf("DELIMITER on line %d should name one delimiter, as in DELIMITER //", s.lineOf(i))
		}
		delim := f[1]
		if strings.IndexByte(delim, 0) >= 0 {
			// Quoted, as the mysql client takes it too: the quotes go.
			at := i + strings.LastIndex(line, delim)
			q := s.text[at : at+len(delim)]
			n := len(q)
			if n < 3 || strings.Count(delim, "\x00") != n || q[n-1] != q[0] || strings.IndexByte(q[1:n-1], q[0]) >= 0 {
				return 0, false, fmt.Errorf("DELIMITER on line %d names no delimiter dbprobe can read: write it without quotes, as in DELIMITER //", s.lineOf(i))
			}
			delim = q[1 : n-1]
		}
		if strings.Contains(delim, "\\") {
			return 0, false, fmt.Errorf("DELIMITER on line %d names a delimiter with a backslash, which the mysql client refuses too: choose another, as in DELIMITER //", s.lineOf(i))
		}
		s.delim = delim
		s.begin(eol)
		return eol, true, nil
	}
	return 0, false, nil
}

// word counts the blocks the word w at m[i:j] opens or closes, and
// returns where the scan goes on.
func (s *scanner) word(w string, i, j int) int {
	defer func() { s.words++ }()
	switch w {
	case "BEGIN":
		if s.opensBlock(j) {
			s.open = append(s.open, block{"BEGIN block", s.lineOf(i)})
		}
	case "CASE":
		s.open = append(s.open, block{"CASE", s.lineOf(i)})
	case "END":
		next, k := s.nextWord(j)
		if uncounted[next] {
			s.prev = next
			return k
		}
		if len(s.open) > 0 {
			s.open = s.open[:len(s.open)-1]
		}
		if next == "CASE" {
			// END CASE closes the CASE statement: CASE here opens nothing.
			s.prev = next
			return k
		}
	}
	s.prev = w
	return j
}

// opensBlock reports whether the BEGIN that ends at offset j opens a
// block rather than a transaction, or is a column's name.
func (s *scanner) opensBlock(j int) bool {
	next, after := s.nextWord(j)
	switch {
	case s.d.DollarQuotes:
		// PostgreSQL writes procedural code as strings (DO $$ … $$, AS
		// $$ … $$): its one block outside them is a SQL-standard body,
		// BEGIN ATOMIC, and begin is a name users may give a column.
		return next == "ATOMIC"
	case next == "" || transactionWords[next] || nameFollowers[next] || s.prev == "XA":
		// No word after it (BEGIN; BEGIN at the end; begin, as a name),
		// a transaction's options, or a name's clause; MySQL's XA BEGIN
		// 'xid'.
		return false
	case s.words == 0:
		// A statement that starts with BEGIN starts a transaction, but
		// for MariaDB's anonymous block, BEGIN NOT ATOMIC.
		then, _ := s.nextWord(after)
		return next == "NOT" && then == "ATOMIC"
	}
	return true
}

// nextWord returns the word after offset j, past blanks and comments, in
// upper case, and its end; "" when something else comes first.
func (s *scanner) nextWord(j int) (string, int) {
	for j < len(s.m) && isSpace(s.m[j]) {
		j++
	}
	if j == len(s.m) || !isNameStart(s.m[j]) {
		return "", j
	}
	k := wordEnd(s.m, j)
	return strings.ToUpper(s.m[j:k]), k
}

// begin starts a statement at offset i.
func (s *scanner) begin(i int) {
	s.start, s.started, s.words, s.prev, s.open = i, false, 0, "", s.open[:0]
}

// end ends the current statement at offset i, keeping it when it holds
// more than blanks and comments.
func (s *scanner) end(i int) {
	first, last := s.start, i
	for first < last && isSpace(s.m[first]) {
		first++
	}
	for last > first && isSpace(s.m[last-1]) {
		last--
	}
	if first < last {
		s.out = append(s.out, Statement{Text: s.text[first:last], Line: s.lineOf(first)})
	}
}

// lineOf returns the line offset i is on, from 1.
func (s *scanner) lineOf(i int) int {
	return 1 + sort.Search(len(s.lines), func(n int) bool { return s.lines[n] > i })
}

// wordEnd returns the end of the word that starts at m[i].
func wordEnd(m string, i int) int {
	j := i + 1
	for j < len(m) && isIdent(m[j]) {
		j++
	}
	return j
}

// isSpace tells the bytes between words; a comment's are spaces in the
// mask.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

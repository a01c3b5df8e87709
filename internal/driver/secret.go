package driver

import (
	"errors"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dbprobe/dbprobe/internal/badinput"
)

// How the password is kept out of messages. dbprobe never puts it into a
// message it builds: URLs are shown by Redacted, and the user, host, port
// and database by name. A message a library wrote may quote it (a
// connection string echoed back, a setting it rejects), and is searched
// for it, as a whole token only, then shown whole or withheld whole.
// Patching the password out letter by letter would both mangle the words
// around it ("cannxxxxxt" for a password "o") and spell it out by where
// the patches fall.

// Withheld stands in for a library's message that holds the password.
const Withheld = "the driver's message contained the password and is not shown"

// withheldCheck follows Withheld in a message about a connection, where
// nothing else says what to check.
const withheldCheck = "; check the host, port, user, password and database in --db"

// Scrub returns msg, text a library wrote, as it is when it does not give
// the password away (see Reveals), and Withheld otherwise: the message
// around it, which dbprobe built, says what to check.
func (t Target) Scrub(msg string) string {
	if t.Reveals(msg) {
		return Withheld
	}
	return msg
}

// ScrubConnect is Scrub for a library's message about a connection that
// nothing around says more of ("open PostgreSQL at HOST: …"): a withheld
// message also says what to check.
func (t Target) ScrubConnect(msg string) string {
	if t.Reveals(msg) {
		return Withheld + withheldCheck
	}
	return msg
}

// ScrubError is Scrub for an error that dbprobe may have wrapped around a
// library's: the text dbprobe's own layers add (a bad-input sentence, a
// "creating table T: " before the cause) is kept, and only what a library
// wrote is checked, each part whole. A part a driver settled already
// (Scrubbed) is kept as it is.
func (t Target) ScrubError(err error) string {
	if err == nil {
		return ""
	}
	return t.scrubLayers(err)
}

// scrubLayers is ScrubError from err down its chain: each layer whose
// text is dbprobe's keeps it, around its cause's scrubbed.
func (t Target) scrubLayers(err error) string {
	msg := err.Error()
	if !t.Reveals(msg) {
		return msg
	}
	var cause error
	switch e := err.(type) {
	case *Scrubbed:
		if e.Unchecked {
			return t.Scrub(msg)
		}
		return msg
	case *Error:
		// The classified cause is the library's error: one message.
		return t.Scrub(msg)
	case *badinput.Error:
		// Built by dbprobe, from Redacted and names, around the cause
		// it wraps, if any.
		cause = errors.Unwrap(e)
		if cause == nil {
			return msg
		}
	default:
		// fmt.Errorf's wrapping is dbprobe's own only above an error of
		// dbprobe's: libraries wrap their errors with it too.
		cause = errors.Unwrap(err)
		if cause == nil || !isFmtWrap(err) || !hasOwnError(cause) {
			return t.Scrub(msg)
		}
	}
	inner := cause.Error()
	i := strings.Index(msg, inner)
	if i < 0 {
		return t.Scrub(msg)
	}
	return msg[:i] + t.scrubLayers(cause) + msg[i+len(inner):]
}

// isFmtWrap reports an error made by fmt.Errorf with one %w.
func isFmtWrap(err error) bool {
	ty := reflect.TypeOf(err)
	if ty.Kind() == reflect.Pointer {
		ty = ty.Elem()
	}
	return ty.PkgPath() == "fmt"
}

// hasOwnError reports whether err is or wraps an error of dbprobe's
// making: a driver's classified or scrubbed error, or bad input.
func hasOwnError(err error) bool {
	var classified *Error
	var scrubbed *Scrubbed
	var bad *badinput.Error
	return errors.As(err, &classified) || errors.As(err, &scrubbed) || errors.As(err, &bad)
}

// Reveals reports whether msg gives the target's password away: holds it,
// as given or in a form a URL or Go's %q writes it, as a whole token (see
// tokenIndexes), either where a connection string or a setting has a
// password (":PW@", "password=PW", "Password=PW;") or where the URL,
// shown without its password, does not hold that token too. A password that is also the
// user, the host, the port or the database is thus not given away by a
// message that names them ("password authentication failed for user
// "postgres"" of the user postgres), nor a password "o" by "connection".
// The text of Withheld is not searched.
func (t Target) Reveals(msg string) bool {
	return t.revealing(msg) > 0
}

// revealing counts the occurrences of the password in msg that give it
// away (see Reveals).
func (t Target) revealing(msg string) int {
	forms := passwordForms(t.Password)
	if len(forms) == 0 {
		return 0
	}
	withheld := withheldText.FindAllStringIndex(msg, -1)
	var shown []string
	n := 0
	for _, form := range forms {
		at := tokenIndexes(msg, form)
		if len(at) == 0 {
			continue
		}
		if shown == nil {
			shown = t.shown()
		}
		elsewhere := false
		for _, s := range shown {
			elsewhere = elsewhere || len(tokenIndexes(s, form)) > 0
		}
		for _, i := range at {
			if overlaps(withheld, i, i+len(form)) {
				continue
			}
			if !elsewhere || passwordPosition(msg, i, i+len(form)) {
				n++
			}
		}
	}
	return n
}

// overlaps reports whether [start, end) overlaps one of the spans.
func overlaps(spans [][]int, start, end int) bool {
	for _, s := range spans {
		if start < s[1] && end > s[0] {
			return true
		}
	}
	return false
}

// withheldText matches the text Scrub and ScrubConnect put in place of a
// message, which holds words a password may be ("host", "port").
var withheldText = regexp.MustCompile(regexp.QuoteMeta(Withheld) + "(?:" + regexp.QuoteMeta(withheldCheck) + ")?")

// shown returns what the target's URL shows of itself besides the
// password, escaped and not: the scheme, the user, the host, the port, the
// path and the options.
func (t Target) shown() []string {
	if t.URL == nil {
		return []string{}
	}
	u := *t.URL
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	if queryPassword(&u) != "" {
		q := u.Query()
		for k := range q {
			if strings.EqualFold(k, "password") {
				q.Del(k)
			}
		}
		u.RawQuery = q.Encode()
	}
	s := u.String()
	forms := []string{s}
	if p, err := url.PathUnescape(s); err == nil {
		forms = append(forms, p)
	}
	if q, err := url.QueryUnescape(s); err == nil {
		forms = append(forms, q)
	}
	return forms
}

// tokenIndexes returns where form occurs in s as a whole token, as a
// regular expression's \b would bound it, with Unicode letters and digits
// counted as word characters: where form starts with a word character,
// the character before it is none, and where it ends with one, the
// character after it is none. So a password "o" is not found in
// "connection", nor "p" in "port", nor "1" in "127.0.0.10"; "1" is found
// in "127.0.0.1:1".
func tokenIndexes(s, form string) []int {
	first, _ := utf8.DecodeRuneInString(form)
	last, _ := utf8.DecodeLastRuneInString(form)
	var at []int
	for from := 0; from < len(s); {
		i := strings.Index(s[from:], form)
		if i < 0 {
			break
		}
		i += from
		end := i + len(form)
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if !(isWordRune(first) && i > 0 && isWordRune(before)) && !(isWordRune(last) && end < len(s) && isWordRune(after)) {
			at = append(at, i)
		}
		from = i + 1
	}
	return at
}

// isWordRune reports a character that is part of a word: a letter, a
// digit, a combining mark or an underscore.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// passwordKeys name a password in a connection string or a setting, as
// "key=value" or "key: value".
var passwordKeys = []string{"password", "passwd", "pwd", "pass"}

// passwordPosition reports whether msg[start:end] stands where a password
// does: in a URL's user information (":PW@"), or as the value of a
// password key ("password=PW", "Password=PW;", "pwd: 'PW'", "password
// "PW"").
func passwordPosition(msg string, start, end int) bool {
	if strings.HasSuffix(msg[:start], ":") && strings.HasPrefix(msg[end:], "@") {
		return true
	}
	const quotes = " \t\"'`"
	before := strings.TrimRight(msg[:start], quotes)
	keys := passwordKeys[:1] // "password PW"
	if k := strings.TrimRight(before, "=:"); len(before)-len(k) == 1 {
		before, keys = strings.TrimRight(k, quotes), passwordKeys
	}
	before = strings.ToLower(before)
	for _, k := range keys {
		if strings.HasSuffix(before, k) {
			return true
		}
	}
	return false
}

// decoy returns the target under another password of its own letters,
// put wherever the password was (the URL's user information, a ?password=
// option, Password). It is one letter the password lacks, repeated, so
// that no form of the password is part of it.
func (t Target) decoy() Target {
	letter := "Q"
	for _, l := range []string{"Q", "Z", "X", "J", "K"} {
		if !strings.Contains(t.Password, l) {
			letter = l
			break
		}
	}
	decoy := strings.Repeat(letter, len(t.Password)+1)
	d := t
	d.Password = decoy
	if t.URL != nil {
		u := *t.URL
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), decoy)
		}
		if queryPassword(&u) != "" {
			q := u.Query()
			for k := range q {
				if strings.EqualFold(k, "password") {
					q.Set(k, decoy)
				}
			}
			u.RawQuery = q.Encode()
		}
		d.URL = &u
	}
	return d
}

// Audit is the tests' judgement of msg, refuse's message for t: it
// returns why the message is wrong, or "" when it is not. refuse is called
// again for the same target under a decoy password. The message must not
// give the password away (see Reveals) more often than that refusal does,
// so that a fuzzed password that is text the message holds for reasons of
// its own ("to" in "TLS mode off to HOST", the host 000 for a password
// "000,") is not taken for a leak; and it must be that refusal's text, but
// for a library's message withheld whole (Withheld), so that nothing is
// patched letter by letter. When the decoy is accepted there is nothing to
// compare with: msg is only searched.
func (t Target) Audit(msg string, refuse func(Target) error) string {
	err := refuse(t.decoy())
	if err == nil {
		if t.Reveals(msg) {
			return "gives the password away"
		}
		return ""
	}
	baseline := err.Error()
	if t.revealing(msg) > t.revealing(baseline) {
		return "gives the password away"
	}
	if !sameBut(msg, baseline) {
		return "is not the message given under another password, " + strconv.Quote(baseline) + ", with at most a library's part withheld whole"
	}
	return ""
}

// sameBut reports whether msg is baseline with, at most, parts of it
// replaced by the withheld sentence.
func sameBut(msg, baseline string) bool {
	if msg == baseline {
		return true
	}
	pieces := withheldText.Split(msg, -1)
	if len(pieces) == 1 {
		return false
	}
	first, last := pieces[0], pieces[len(pieces)-1]
	if !strings.HasPrefix(baseline, first) || !strings.HasSuffix(baseline[len(first):], last) {
		return false
	}
	rest := baseline[len(first) : len(baseline)-len(last)]
	for _, p := range pieces[1 : len(pieces)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}

// passwordForms are the ways a password may be written out: as it is,
// escaped for a query, a path or a URL's user information, and quoted by
// Go's %q. Libraries quote whichever form they were given.
func passwordForms(password string) []string {
	if password == "" {
		return nil
	}
	forms := []string{password}
	userinfo := strings.TrimPrefix(url.UserPassword("", password).String(), ":")
	quoted := strconv.Quote(password)
	for _, f := range []string{url.QueryEscape(password), url.PathEscape(password), userinfo, quoted[1 : len(quoted)-1]} {
		if !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	return forms
}

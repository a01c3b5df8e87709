package drivertest

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// The passwords the drivers' secrets fuzz targets try are chosen by a
// fuzzed kind, so that the fuzzer spends its time on those that defeat a
// search for the password in a message: a short one, whose letters are in
// every word, and one that is also text the message holds for other
// reasons (the user, the host, the port, the database, a word of its own).
const (
	kindShort    = iota // the fuzzed password cut to 1, 2 or 3 characters
	kindUser            // the URL's user name
	kindHost            // the URL's host name
	kindPort            // the URL's port
	kindDatabase        // the URL's database: its path, or ?database=
	kindWord            // a word of the message under another password
	kindAsFuzzed        // the fuzzed password whole
	kinds
)

// SecretPassword returns the password a secrets fuzz target tries for
// kind: see the kinds above. u is the URL the password goes into, message
// the refusal of that URL under another password (needed only when
// NeedsMessage(kind)). It returns "" when the kind has nothing to offer
// (a URL without a user, a message without words), and the input is then
// skipped.
func SecretPassword(fuzzed string, kind uint8, u *url.URL, message string) string {
	n := int(kind) / kinds // which length, which word
	switch int(kind) % kinds {
	case kindShort:
		r := []rune(fuzzed)
		return string(r[:min(len(r), 1+n%3)])
	case kindUser:
		return u.User.Username()
	case kindHost:
		return u.Hostname()
	case kindPort:
		return u.Port()
	case kindDatabase:
		if db := strings.Trim(u.Path, "/"); db != "" {
			return db
		}
		return u.Query().Get("database")
	case kindWord:
		words := strings.FieldsFunc(message, func(r rune) bool {
			return r != '_' && !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
		})
		if len(words) == 0 {
			return ""
		}
		return words[n%len(words)]
	}
	return fuzzed
}

// NeedsMessage reports whether SecretPassword takes a word of the
// message for kind: the caller gets the refusal under another password
// first.
func NeedsMessage(kind uint8) bool { return int(kind)%kinds == kindWord }

// OtherPassword is the password a secrets fuzz target gets the message
// under, to take a word of it: one no kind gives.
const OtherPassword = "Other-pw9"

// SecretKinds are a seed of every kind, and of each length and word.
var SecretKinds = func() []uint8 {
	var k []uint8
	for i := range 3 * kinds {
		k = append(k, uint8(i))
	}
	return k
}()

// Refusal is one way a driver refuses a --db value with a password in it:
// a wrong password, an unreachable server, an option the driver refuses,
// TLS the server does not offer, a URL that does not parse.
type Refusal struct {
	// Name names the refusal in failures.
	Name string
	// URL is the --db value without the password; the user name is kept.
	URL *url.URL
	// Unescaped types the password into the URL unescaped, as a user
	// does, so that a / ? # or @ in it breaks the URL.
	Unescaped bool
}

// typed returns the --db value with password in it, as a user types it.
func (r Refusal) typed(password string) string {
	if !r.Unescaped {
		return r.with(password).String()
	}
	u := *r.URL
	u.User = nil
	return strings.Replace(u.String(), "://", "://"+r.URL.User.Username()+":"+password+"@", 1)
}

// with returns the URL with password in its user information.
func (r Refusal) with(password string) *url.URL {
	u := *r.URL
	u.User = url.UserPassword(r.URL.User.Username(), password)
	return &u
}

// printed is an error as the command prints it: an error of Open through
// Target.ScrubError, one of driver.ParseTarget as it is.
type printed struct {
	msg string
	err error
}

func (p *printed) Error() string { return p.msg }
func (p *printed) Unwrap() error { return p.err }

// Refuse opens the --db value of r with password in it as the command
// does, and returns the error as it would print it; nil if Open succeeded.
func (r Refusal) Refuse(password string) error {
	target, err := driver.ParseTarget(r.typed(password), "")
	if err != nil {
		return err
	}
	d, _, err := driver.Lookup(target.Driver)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := d.Open(ctx, target, driver.Options{Sessions: 1})
	if err == nil {
		db.Close()
		return nil
	}
	return &printed{msg: target.ScrubError(err), err: err}
}

// FuzzRefusals fuzzes a driver's refusals with the passwords that defeat
// a search for them (see SecretPassword): each must be one line of bad
// input, as the command prints it, that neither gives the password away
// nor patches it out of anyone's words (see driver.Target.Audit), and
// that still says what to check when a library's message is withheld.
// Each input opens the database two or three times: the refusals of a
// real server are what is tested.
func FuzzRefusals(f *testing.F, refusals []Refusal) {
	for which := range refusals {
		for _, kind := range SecretKinds {
			f.Add([]string{"o", "p", "1", "to", "é", "a/b@c"}[(which+int(kind))%6], kind, uint8(which))
		}
	}
	f.Fuzz(func(t *testing.T, password string, kind, which uint8) {
		r := refusals[int(which)%len(refusals)]
		message := ""
		if NeedsMessage(kind) {
			if err := r.Refuse(OtherPassword); err != nil {
				message = err.Error()
			}
		}
		secret := SecretPassword(password, kind, r.URL, message)
		if secret == "" {
			return
		}
		err := r.Refuse(secret)
		if err == nil {
			t.Fatalf("%s: %s with password %q was accepted", r.Name, r.URL.Redacted(), secret)
		}
		msg := err.Error()
		if !badinput.Is(err) || strings.Contains(msg, "\n") {
			t.Fatalf("%s, password %q: %q is not one line of bad input", r.Name, secret, msg)
		}
		if r.Unescaped {
			if _, err := driver.ParseTarget(r.typed(secret), ""); err == nil {
				return // nothing broke: the wrong password's refusal
			}
		}
		// The characters of a password decide whether and how a URL
		// with it parses, typed unescaped, and whether a library takes
		// it (pgx refuses a NUL): the password it is compared with has
		// the same shape.
		refuse := func(d driver.Target) error { return r.Refuse(shapedLike(secret, d.Password)) }
		target := driver.Target{Driver: r.URL.Scheme, URL: r.with(secret), Password: secret}
		if why := target.Audit(msg, refuse); why != "" {
			t.Fatalf("%s, password %q: the message %s: %q", r.Name, secret, why, msg)
		}
		if strings.Contains(msg, driver.Withheld) && !strings.Contains(msg, "check") && !strings.Contains(msg, "write it as") {
			t.Fatalf("%s, password %q: the message withholds the driver's and says nothing to check: %q", r.Name, secret, msg)
		}
	})
}

// shapedLike returns password with its ASCII letters and underscores
// replaced by the first letter of decoy (one the password lacks), its
// ASCII digits by a digit it lacks, and its other letters and digits by
// one of Ж or Щ, which it lacks: another password, whose word characters
// are none of the password's, that a URL or a library breaks on in the
// same places. A password without word characters has no other shape.
func shapedLike(password, decoy string) string {
	other := 'Ж'
	if strings.ContainsRune(password, other) {
		other = 'Щ'
	}
	digit := '7'
	for _, d := range "7345689012" {
		if !strings.ContainsRune(password, d) {
			digit = d
			break
		}
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9':
			return digit
		case r < utf8.RuneSelf && (r == '_' || unicode.IsLetter(r)):
			return rune(decoy[0])
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)):
			return other
		}
		return r
	}, password)
}

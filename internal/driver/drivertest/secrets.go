package drivertest

import (
	"net/url"
	"strings"
	"unicode"
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

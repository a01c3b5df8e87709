package experiment

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/rawnet"
)

// TargetConfig says where an experiment runs: --db and its password.
type TargetConfig struct {
	// DB is --db as given; when empty, DBPROBE_DB is read.
	DB string
	// PasswordFile is --password-file; without it DBPROBE_PASSWORD is
	// read when the URL has no password.
	PasswordFile string
	// AllowInsecureTLS is --allow-insecure-tls.
	AllowInsecureTLS bool
	// DefaultFile names the SQLite database created in a new temporary
	// directory when no URL is given ("ycsb.db"); empty refuses with
	// NoDefault instead.
	DefaultFile string
	// DefaultIn is the directory the default database's temporary
	// directory is made in, "" for the system's (os.TempDir); DefaultInFlag
	// names the flag that gave it, for the refusal when dbprobe cannot
	// write there ("--placement").
	DefaultIn     string
	DefaultInFlag string
	// NoDefault is the refusal when no URL is given and there is no
	// default ("run needs --db: …").
	NoDefault string
	// KeepDefault keeps the default database's directory at exit, for
	// KeptFor ("dbprobe run"); KeepFlag says which flag would have kept it
	// when it goes ("--keep-db").
	KeepDefault bool
	KeptFor     string
	KeepFlag    string
}

// Target is a resolved target, and the default database's directory when
// one was made.
type Target struct {
	driver.Target
	tempDir    string
	defaultDB  string
	removeTemp bool
}

// ResolveTarget reads the target's URL and password, or creates the
// default SQLite database's directory (said on stderr).
func ResolveTarget(c TargetConfig, stderr io.Writer) (*Target, error) {
	password, err := readPassword(c.PasswordFile)
	if err != nil {
		return nil, err
	}
	raw, source := c.DB, "--db"
	if raw == "" {
		raw, source = os.Getenv("DBPROBE_DB"), "DBPROBE_DB"
	}
	t := &Target{}
	if raw == "" {
		if c.DefaultFile == "" {
			return nil, badinput.New("%s", c.NoDefault)
		}
		dir, err := os.MkdirTemp(c.DefaultIn, "dbprobe-")
		if err != nil {
			if c.DefaultIn != "" {
				// The directory is the user's choice: what is wrong with it is
				// theirs to fix, and dbprobe's own OS account is the one that
				// needs to write there (SQLite runs inside dbprobe).
				return nil, badinput.New("%s %s: cannot create the SQLite database there (%s); dbprobe runs SQLite as OS user %s, which needs a directory it may write to",
					c.DefaultInFlag, c.DefaultIn, ShortError(err), CurrentUser())
			}
			return nil, fmt.Errorf("creating a temporary directory for SQLite: %w", err)
		}
		t.tempDir, t.removeTemp = dir, !c.KeepDefault
		t.defaultDB = filepath.Join(dir, c.DefaultFile)
		raw = "sqlite://" + filepath.ToSlash(t.defaultDB)
		what := "kept for " + c.KeptFor
		if t.removeTemp {
			what = "removed at exit"
			if c.KeepFlag != "" {
				what += "; " + c.KeepFlag + " keeps it"
			}
		}
		fmt.Fprintf(stderr, "dbprobe: no --db given: using a new SQLite database %s (%s)\n", t.defaultDB, what)
	}
	if t.Target, err = driver.ParseTargetFrom(source, raw, password); err != nil {
		t.Cleanup(io.Discard)
		return nil, err
	}
	// Checked for every target, though only the server drivers use it: a
	// value that means nothing is an error wherever it is given.
	if err := rawnet.Check(); err != nil {
		t.Cleanup(io.Discard)
		return nil, err
	}
	t.AllowInsecureTLS = c.AllowInsecureTLS
	return t, nil
}

// DefaultFile is the path of the default SQLite database dbprobe made
// (TargetConfig.DefaultFile), "" when a URL was given.
func (t *Target) DefaultFile() string { return t.defaultDB }

// CurrentUser names the OS account dbprobe runs as, for messages about
// who needs access to a file; its numeric id when it has no name.
func CurrentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return fmt.Sprintf("uid %d", os.Getuid())
}

// RemoveAtAbandon removes the default database's directory on a second
// interrupt, when it would be removed at exit.
func (t *Target) RemoveAtAbandon(in *Interrupts) {
	if t.tempDir != "" && t.removeTemp {
		dir := t.tempDir
		in.AtAbandon(func() { os.RemoveAll(dir) })
	}
}

// Cleanup removes the default database's directory, or says where the
// database stays.
func (t *Target) Cleanup(stderr io.Writer) {
	if t.tempDir == "" {
		return
	}
	if t.removeTemp {
		os.RemoveAll(t.tempDir)
		return
	}
	fmt.Fprintf(stderr, "dbprobe: the SQLite database stays at %s; run against it with --db %s\n", t.defaultDB, t.Redacted())
}

// Open opens the target's database, failing early on an unreachable server
// or refused credentials (within 30 s), with its messages kept free of the
// password.
func (t *Target) Open(ctx context.Context, opts driver.Options) (driver.DB, error) {
	d, _, err := driver.Lookup(t.Driver)
	if err != nil {
		return nil, badinput.New("%v", err)
	}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, err := d.Open(octx, t.Target, opts)
	if err != nil {
		return nil, Scrubbed(t.Target, err)
	}
	return db, nil
}

// readPassword returns the password from file, or DBPROBE_PASSWORD.
func readPassword(file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", badinput.New("cannot read --password-file %s: %v", file, ShortError(err))
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	return os.Getenv("DBPROBE_PASSWORD"), nil
}

// ShortError drops the path an os error repeats.
func ShortError(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return fmt.Sprint(err)
}

// scrubbed is an error whose message, if it holds the target's password
// in a library's words, shows them withheld (see driver.Target.ScrubError).
type scrubbed struct {
	target driver.Target
	err    error
}

func (s scrubbed) Error() string { return s.target.ScrubError(s.err) }
func (s scrubbed) Unwrap() error { return s.err }

// Scrubbed returns err with a message that shows no library's words
// holding the target's password; nil stays nil.
func Scrubbed(target driver.Target, err error) error {
	if err == nil {
		return nil
	}
	return scrubbed{target, err}
}

// RestoreAtAbandon registers, for a database that changed server-wide
// settings, putting them back on a second interrupt (Close, which does it
// otherwise, is never reached then), saying on stderr if it cannot.
func RestoreAtAbandon(db driver.DB, in *Interrupts, stderr io.Writer) {
	r, ok := db.(driver.SettingsRestorer)
	if !ok {
		return
	}
	in.AtAbandon(func() {
		ctx, cancel := context.WithTimeout(context.Background(), abandonRestoreTimeout)
		defer cancel()
		if err := r.RestoreSettings(ctx); err != nil {
			fmt.Fprintf(stderr, "dbprobe: %v; set it back by hand\n", err)
		}
	})
}

// abandonRestoreTimeout bounds putting server settings back after a second
// interrupt, which is meant to stop the command at once.
const abandonRestoreTimeout = 5 * time.Second

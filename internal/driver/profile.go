package driver

import "github.com/dbprobe/dbprobe/internal/badinput"

// Profile is what a driver says of the database a target names before it
// opens anything, so that a command can refuse what cannot work before a
// file is created or a connection made: a SQL experiment on Redis, more
// sessions than dbprobe's process may open files for.
type Profile struct {
	// Database names it as its users do ("SQLite", "Redis").
	Database string
	// Placement is where it will run.
	Placement Placement
	// FilesPerSession is how many file descriptors one session holds open
	// in dbprobe's own process, for a database that runs inside it
	// (SQLite: its database file and its WAL, or its rollback journal
	// while it writes); 0 when a session holds none, or when the driver
	// does not say.
	FilesPerSession int
	// Files says what they are, for messages.
	Files string
	// Lacks are the capabilities no database of the driver has, whatever
	// the server, each with why (Support.Note).
	Lacks []Support
}

// Profiler is a Driver that profiles a target's database without opening
// it. Profile must not touch the network or the file system beyond
// reading the target.
type Profiler interface {
	Profile(t Target) Profile
}

// ProfileOf returns the Profile t's driver gives, and false for a driver
// that gives none (nothing is known before it opens).
func ProfileOf(t Target) (Profile, bool) {
	d, _, err := Lookup(t.Driver)
	if err != nil {
		return Profile{}, false
	}
	p, ok := d.(Profiler)
	if !ok {
		return Profile{}, false
	}
	return p.Profile(t), true
}

// Need returns nil unless the profile says the database lacks one of
// caps, and then one line of bad input naming the database and the first
// it lacks, as Capabilities.Need does once the database is open.
func (p Profile) Need(caps ...Capability) error {
	for _, c := range caps {
		for _, s := range p.Lacks {
			if s.Capability == c {
				return badinput.New("%s has no %s: %s", p.Database, c, s.Note)
			}
		}
	}
	return nil
}

// Lacking returns the capabilities c says the database lacks, for a
// Profile's Lacks.
func Lacking(c Capabilities) []Support {
	var out []Support
	for _, s := range c.List() {
		if !s.OK {
			out = append(out, s)
		}
	}
	return out
}

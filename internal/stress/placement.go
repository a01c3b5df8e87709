package stress

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
	"github.com/dbprobe/dbprobe/internal/experiment"
	"github.com/dbprobe/dbprobe/internal/result"
)

// placed is where --placement and --placement-temp put things: the
// Locations dbprobe made (dropped at the end, after the mix's table) and
// the statements that send each connection's temporary files to one.
type placed struct {
	// table is the Location of the mix's table; nil for the database's
	// default place (or a SQLite database file made in the directory).
	table *driver.Location
	// temp is the Location of temporary files; tempSetup runs on every
	// connection (SQLOptions.Setup) before --session-setup.
	temp      *driver.Location
	tempSetup []string
	// made are the Locations CreateLocation made, in order.
	made []driver.Location
}

// validatePlacement checks --placement and --placement-temp before
// anything connects.
func (c *Config) validatePlacement() error {
	for _, p := range []struct{ flag, dir string }{{"--placement", c.Placement}, {"--placement-temp", c.PlacementTemp}} {
		if p.dir != "" && !filepath.IsAbs(p.dir) {
			return badinput.New("%s %s: give an absolute path, a directory on the database's host", p.flag, p.dir)
		}
	}
	if c.Placement != "" && c.Mix == MixNone {
		return badinput.New("--placement puts the tables dbprobe creates on a directory, and with --sql dbprobe creates none (your --setup does): name the place in your own CREATE TABLE (a tablespace, DATA DIRECTORY), or use --mix oltp; --placement-temp works with --sql")
	}
	return nil
}

// placementDefaultIn is where the default SQLite database goes: with
// --placement, a new directory inside it, so that the mix's table (in
// the database's file) lives there on a database without a Placer.
func (c *Config) placementDefaultIn() (dir, flag string) {
	if c.Placement != "" {
		return c.Placement, "--placement"
	}
	return "", ""
}

// place makes the Locations --placement and --placement-temp ask for,
// before anything else is created on the server.
func (j *job) place(ctx context.Context) error {
	c := j.c
	placer, hasPlacer := j.db.(driver.Placer)
	hasPlacer = hasPlacer && j.caps.OK(driver.CapPlace)
	if hasPlacer && (c.Placement != "" || c.PlacementTemp != "") {
		if err := j.dropLeftoverLocations(ctx, placer); err != nil {
			return err
		}
	}
	if c.Placement != "" {
		switch {
		case hasPlacer:
			loc, err := j.makeLocation(ctx, placer, "--placement", c.Placement)
			if err != nil {
				return err
			}
			j.placed.table = &loc
		case j.target.DefaultFile() != "" && within(j.target.DefaultFile(), c.Placement):
			// The database is one file, made in the directory: its tables
			// are there.
		default:
			why := j.caps.Support(driver.CapPlace).Note
			if why == "" {
				why = "dbprobe does not do it there"
			}
			if strings.Contains(why, "--db") {
				// The database's own words say it already.
				return badinput.New("--placement %s: %s has no %s: %s; drop --placement and give --db %s", c.Placement, j.caps.Database, driver.CapPlace, why, j.fileURLIn(c.Placement))
			}
			return badinput.New("--placement %s: %s has no %s (%s): drop --placement and put the database's file in that directory with --db (e.g. --db %s)",
				c.Placement, j.caps.Database, driver.CapPlace, why, j.fileURLIn(c.Placement))
		}
	}
	if c.PlacementTemp == "" {
		return nil
	}
	if err := j.caps.Need(driver.CapTempPlace); err != nil {
		return badinput.New("--placement-temp %s: %v", c.PlacementTemp, err)
	}
	tp, ok := j.db.(driver.TempPlacer)
	if !ok {
		return badinput.New("--placement-temp %s: %s has no %s", c.PlacementTemp, j.caps.Database, driver.CapTempPlace)
	}
	var loc driver.Location
	switch {
	case j.placed.table != nil && filepath.Clean(c.PlacementTemp) == filepath.Clean(c.Placement):
		loc = *j.placed.table
	case hasPlacer:
		var err error
		if loc, err = j.makeLocation(ctx, placer, "--placement-temp", c.PlacementTemp); err != nil {
			return err
		}
	default:
		// A database without Locations of its own (SQLite) is told the
		// directory itself; it runs inside dbprobe, whose account writes.
		if err := checkWritable("--placement-temp", c.PlacementTemp); err != nil {
			return err
		}
		loc = driver.Location{Dir: c.PlacementTemp, Description: "directory " + c.PlacementTemp}
	}
	setup, err := tp.TempSetup(loc)
	if err != nil {
		return badinput.New("--placement-temp %s: %v", c.PlacementTemp, err)
	}
	j.placed.temp, j.placed.tempSetup = &loc, setup
	j.notes = append(j.notes, j.tempNote(loc, setup))
	return nil
}

// dropLeftoverLocations drops the Locations dbprobe's marker table
// records that an earlier run left (killed before its end, or --keep),
// before this run makes its own, perhaps in the same directory: only
// dbprobe's, and only empty ones, since the database refuses to drop one
// that holds a table. One that cannot go stays, said in a line; the
// database's refusal to reuse its directory then names it.
func (j *job) dropLeftoverLocations(ctx context.Context, placer driver.Placer) error {
	left, err := placer.Leftovers(ctx)
	if err != nil {
		return fmt.Errorf("reading the places an earlier run left: %w", experiment.Scrubbed(j.target.Target, err))
	}
	for _, l := range left {
		var note string
		if err := placer.DropLocation(ctx, l); err != nil {
			note = fmt.Sprintf("%s: an earlier run left it, and it stays: %s", l.Description, strings.Join(strings.Fields(j.target.ScrubError(err)), " "))
		} else {
			note = fmt.Sprintf("%s: an earlier run left it (--keep, or a run that was killed); dbprobe's marker table records creating it and it was empty, so it was dropped", l.Description)
		}
		fmt.Fprintln(j.c.Stderr, "dbprobe: "+note)
		j.notes = append(j.notes, note)
	}
	return nil
}

// fileURLIn is an example --db for a database file in dir, from the
// target's own scheme.
func (j *job) fileURLIn(dir string) string {
	return j.target.Driver + "://" + filepath.ToSlash(filepath.Join(dir, "stress.db"))
}

// within reports whether path is in dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// makeLocation has the database make dir ready for tables, and records
// the Location for the end. On a database on this host, a directory that
// is not there is refused before the database is asked, and a refusal
// names the OS account the server runs as.
func (j *job) makeLocation(ctx context.Context, placer driver.Placer, flag, dir string) (driver.Location, error) {
	local := experiment.Local(j.db, j.target.Target)
	if local {
		info, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return driver.Location{}, badinput.New("%s %s: no such directory on the database's host (this machine): create it and give it to the server's OS user, here %s", flag, dir, j.serverAccount())
		case err == nil && !info.IsDir():
			return driver.Location{}, badinput.New("%s %s is not a directory: give a directory on the database's host", flag, dir)
		}
	}
	loc, err := placer.CreateLocation(ctx, dir)
	if err != nil {
		err = experiment.Scrubbed(j.target.Target, err)
		if badinput.Is(err) {
			who := ""
			if local && strings.Contains(err.Error(), "OS user") {
				// The database says the directory must be its OS user's:
				// which user that is here.
				who = "; the server's OS user here: " + j.serverAccount()
			}
			return driver.Location{}, badinput.New("%s %s: %v%s", flag, dir, err, who)
		}
		return driver.Location{}, fmt.Errorf("%s %s: %w", flag, dir, err)
	}
	j.placed.made = append(j.placed.made, loc)
	return loc, nil
}

// serverAccount names the OS account a server on this host runs as: the
// owner of its data directory, when the database says where that is.
func (j *job) serverAccount() string {
	if j.dataDir != "" {
		if owner := ownerOf(j.dataDir); owner != "" {
			return fmt.Sprintf("%s (the owner of its data directory %s)", owner, j.dataDir)
		}
	}
	return "the one that owns the server's data directory"
}

// checkWritable refuses a directory that is not there or that dbprobe's
// own account cannot write in: for a database that runs inside dbprobe.
func checkWritable(flag, dir string) error {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return badinput.New("%s %s: no such directory: create it, writable by OS user %s (dbprobe, in which the database runs)", flag, dir, experiment.CurrentUser())
	case err != nil:
		return badinput.New("%s %s: %s", flag, dir, experiment.ShortError(err))
	case !info.IsDir():
		return badinput.New("%s %s is not a directory", flag, dir)
	}
	f, err := os.CreateTemp(dir, ".dbprobe-check-")
	if err != nil {
		return badinput.New("%s %s: cannot write there (%s); OS user %s (dbprobe, in which the database runs) needs write access to it", flag, dir, experiment.ShortError(err), experiment.CurrentUser())
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// dropLocations drops the Locations dbprobe made, newest first, after the
// mix's table; --keep keeps them with the table, which is in one.
func (j *job) dropLocations(ctx context.Context) error {
	if len(j.placed.made) == 0 {
		return nil
	}
	if j.c.Keep && j.mix != nil && j.mix.created {
		for _, l := range j.placed.made {
			fmt.Fprintf(j.c.Stderr, "dbprobe: --keep: %s stays, recorded as dbprobe's\n", l.Description)
		}
		return nil
	}
	placer := j.db.(driver.Placer)
	var errs []error
	for k := len(j.placed.made) - 1; k >= 0; k-- {
		l := j.placed.made[k]
		if err := placer.DropLocation(ctx, l); err != nil {
			errs = append(errs, fmt.Errorf("dropping %s: %w; drop it by hand", l.Description, experiment.Scrubbed(j.target.Target, err)))
			continue
		}
		j.placed.made = append(j.placed.made[:k], j.placed.made[k+1:]...)
	}
	return errors.Join(errs...)
}

// cleanup drops what dbprobe made for the run — the mix's table, then the
// Locations — at the end, also after Ctrl-C or a failure, on a context of
// its own when the run's is gone.
func (j *job) cleanup(ctx context.Context) error {
	if (j.mix == nil || !j.mix.created) && len(j.placed.made) == 0 {
		return nil
	}
	ctx, cancel := j.afterRun(ctx)
	defer cancel()
	err := j.dropMix(ctx)
	if err != nil {
		// Its Location cannot go while it holds the table.
		return err
	}
	return j.dropLocations(ctx)
}

// tableNotes say, for the header, the mix table's size and where its
// rows actually live: the file the database names, and on a database on
// this host that file's device, file system and mount.
func (j *job) tableNotes(ctx context.Context, m *oltp) []string {
	name := m.table.Name
	var out []string
	if sizer, ok := j.db.(driver.TableSizer); ok && j.caps.OK(driver.CapSize) {
		if size, err := sizer.TableSize(ctx, m.table); err == nil {
			out = append(out, fmt.Sprintf("table %s: %s rows of %s payload bytes, %s on disk (%s bytes, from %s)",
				name, result.Grouped(m.rows), result.Grouped(int64(m.table.PayloadBytes)), experiment.BytesText(uint64(max(size.Bytes, 0))), result.Grouped(size.Bytes), size.How))
		} else {
			out = append(out, fmt.Sprintf("table %s: its size is not known: %s", name, j.target.ScrubError(err)))
		}
	}
	where := "the database's default place"
	switch {
	case m.table.Where != nil:
		where = m.table.Where.Description
	case j.c.Placement != "" && j.target.DefaultFile() != "":
		// SQLite: the database dbprobe made in the directory.
		where = "the database's file, made in --placement " + j.c.Placement
	}
	path, how := "", ""
	if loc, ok := j.db.(driver.Locator); ok && j.caps.OK(driver.CapLocate) {
		p, err := loc.TablePath(ctx, m.table)
		if err != nil {
			how = "its file is not known: " + strings.Join(strings.Fields(j.target.ScrubError(err)), " ")
		} else {
			path = p
		}
	} else if f := j.target.DefaultFile(); f != "" {
		// The database dbprobe made is one file, every table in it.
		path = f
	} else {
		how = fmt.Sprintf("its file is not known: %s has no %s here (%s)", j.caps.Database, driver.CapLocate, j.caps.Support(driver.CapLocate).Note)
	}
	if path == "" {
		out = append(out, fmt.Sprintf("where: table %s is in %s; %s", name, where, how))
		return out
	}
	out = append(out, fmt.Sprintf("where: table %s is in %s, file %s%s", name, where, path, j.fileSystemText(path)))
	return out
}

// tempNote says where temporary files go, and how, for the header.
func (j *job) tempNote(l driver.Location, setup []string) string {
	return fmt.Sprintf("where: temporary files go to %s (on every connection: %s)%s", l.Description, strings.Join(setup, "; "), j.fileSystemText(l.Dir))
}

// fileSystemText is ", on device D (TYPE, mounted at M; F free of S)" for
// a path on this host, or why it is not said.
func (j *job) fileSystemText(path string) string {
	if !experiment.Local(j.db, j.target.Target) {
		return " (on the database's host, whose file systems dbprobe cannot see from here)"
	}
	fs, err := experiment.FileSystemOf(path)
	// A file in a directory the server's account alone may read: the
	// nearest directory above it that dbprobe may read is on the same
	// file system unless a mount lies between.
	for p := path; err != nil && filepath.Dir(p) != p; {
		p = filepath.Dir(p)
		var err2 error
		if fs, err2 = experiment.FileSystemOf(p); err2 == nil {
			err = nil
		}
	}
	if err != nil {
		return fmt.Sprintf(" (its file system is not readable from here: %s)", experiment.ShortError(err))
	}
	dev := fs.Device
	if dev == "" {
		dev = "an unnamed device"
	}
	return fmt.Sprintf(", on %s (%s, mounted at %s; %s free of %s)", dev, fs.Type, fs.Mount, experiment.BytesText(fs.Free), experiment.BytesText(fs.Size))
}

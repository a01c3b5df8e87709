package mysql

import "testing"

// The redo log's directory is innodb_log_group_home_dir read against the
// datadir, or the datadir itself when unset.
func TestLogDirectory(t *testing.T) {
	for _, c := range []struct{ datadir, home, want string }{
		{"/var/lib/mysql/", "./", "/var/lib/mysql"},
		{"/var/lib/mysql/", "", "/var/lib/mysql"},
		{"/var/lib/mysql/", "/mnt/log/", "/mnt/log"},
		{"/var/lib/mysql/", "redo", "/var/lib/mysql/redo"},
	} {
		if got := logDirectory(c.datadir, c.home); got != c.want {
			t.Errorf("datadir %q, home %q: %q, want %q", c.datadir, c.home, got, c.want)
		}
	}
}

package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbprobe/dbprobe/internal/badinput"
	"github.com/dbprobe/dbprobe/internal/driver"
)

// tableFileQueries find the file of InnoDB tablespace ? (database/table),
// in the order tried: MariaDB 10.6 and later, MariaDB before 10.6 and
// MySQL 5.7, MySQL 8. A server without the view or column refuses the
// query, and the next is tried.
var tableFileQueries = []string{
	"SELECT FILENAME FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME = ?",
	"SELECT d.PATH FROM information_schema.INNODB_SYS_TABLESPACES AS t JOIN information_schema.INNODB_SYS_DATAFILES AS d ON d.SPACE = t.SPACE WHERE t.NAME = ?",
	"SELECT FILE_NAME FROM information_schema.FILES WHERE TABLESPACE_NAME = ? AND FILE_TYPE = 'TABLESPACE'",
}

// TablePath returns the .ibd file of t, as InnoDB names it, made absolute
// with @@datadir when relative. A table without a file of its own
// (innodb_file_per_table off when it was created) is in the system
// tablespace, whose first file is returned.
func (db *DB) TablePath(ctx context.Context, t driver.DataTable) (string, error) {
	if err := t.Check(); err != nil {
		return "", err
	}
	quoted, stored := db.dataTable(t)
	var database, datadir string
	var homeDir sql.NullString
	var dataFiles string
	var exists int
	err := db.pool.QueryRowContext(ctx, "SELECT DATABASE(), @@datadir, @@innodb_data_home_dir, @@innodb_data_file_path, "+
		"(SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?)", stored).
		Scan(&database, &datadir, &homeDir, &dataFiles, &exists)
	if err != nil {
		return "", classify(err)
	}
	if exists == 0 {
		return "", badinput.New("MySQL: there is no table %s", quoted)
	}
	for _, q := range tableFileQueries {
		var file string
		err := db.pool.QueryRowContext(ctx, q, database+"/"+stored).Scan(&file)
		switch {
		case err == nil:
			return absoluteIn(datadir, file), nil
		case errors.Is(err, sql.ErrNoRows):
			continue
		case !refused(err):
			return "", classify(err)
		}
	}
	// innodb_data_file_path is "ibdata1:12M:autoextend;ibdata2:…"; the
	// files are under innodb_data_home_dir, the datadir when it is empty.
	first, _, _ := strings.Cut(strings.Split(dataFiles, ";")[0], ":")
	if first == "" {
		return "", fmt.Errorf("mysql: table %s has no file of its own and innodb_data_file_path (%q) names none", quoted, dataFiles)
	}
	dir := datadir
	if homeDir.Valid && homeDir.String != "" {
		dir = absoluteIn(datadir, homeDir.String)
	}
	return absoluteIn(dir, first), nil
}

// absoluteIn returns path, made absolute under dir when it is relative
// ("./db/t.ibd").
func absoluteIn(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}

// CacheSize reads innodb_buffer_pool_size: InnoDB's own cache of pages,
// which it reads the table through.
func (db *DB) CacheSize(ctx context.Context) (driver.CacheSize, error) {
	var n int64
	if err := db.pool.QueryRowContext(ctx, "SELECT @@innodb_buffer_pool_size").Scan(&n); err != nil {
		return driver.CacheSize{}, classify(err)
	}
	return driver.CacheSize{Bytes: n, How: "innodb_buffer_pool_size = " + strconv.FormatInt(n, 10)}, nil
}

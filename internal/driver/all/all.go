// Package all links every database driver into the binary. The command
// imports it once; a driver left out here would be missing from --db
// without any error until someone asked for it.
package all

import (
	_ "github.com/dbprobe/dbprobe/internal/driver/mysql"    // --db mysql://…, mariadb://…
	_ "github.com/dbprobe/dbprobe/internal/driver/null"     // --db null: the harness's own ceiling
	_ "github.com/dbprobe/dbprobe/internal/driver/postgres" // --db postgres://…
	_ "github.com/dbprobe/dbprobe/internal/driver/redis"    // --db redis://…, rediss://…
	_ "github.com/dbprobe/dbprobe/internal/driver/sqlite"   // --db sqlite:… (the default target)
	_ "github.com/dbprobe/dbprobe/internal/driver/sqlserver"
)

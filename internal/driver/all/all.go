// Package all links every database driver into the binary. The command
// imports it once; a driver left out here would be missing from --db
// without any error until someone asked for it.
package all

import (
	_ "dbprobe/internal/driver/mysql"    // --db mysql://…, mariadb://…
	_ "dbprobe/internal/driver/null"     // --db null: the harness's own ceiling
	_ "dbprobe/internal/driver/postgres" // --db postgres://…
	_ "dbprobe/internal/driver/redis"    // --db redis://…, rediss://…
	_ "dbprobe/internal/driver/sqlite"   // --db sqlite:… (the default target)
	_ "dbprobe/internal/driver/sqlserver"
)

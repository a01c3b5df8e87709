# scripts/lib/mariadb.sh — sourced (after common.sh) by scripts/test and
# scripts/with-databases:
# start_throwaway_mariadb starts a MariaDB (or MySQL) server of its own (data
# directory and socket in a temporary directory, a free port on 127.0.0.1, a
# random password), exports DBPROBE_MYSQL_URL, and stops it and removes its
# files when the calling script exits. MariaDB refuses to run as root unless
# told which user to run as, so as root the server runs as the `mysql` OS
# user when there is one (else as root, said explicitly).

# my_first_command prints the first of its arguments that is a command.
my_first_command() {
	local c
	for c in "$@"; do
		if command -v "$c" >/dev/null 2>&1; then
			command -v "$c"
			return
		fi
	done
}

my_tmp=""
my_pid=""
my_sock=""
my_user=""
my_client=""
my_admin=""

# my_client_root runs the command-line client as the server's initial
# superuser over the socket: mariadb-install-db lets the OS user that runs
# the server in through unix_socket authentication, as MariaDB's root when
# that is root.
my_client_root() {
	"$my_client" --no-defaults --socket="$my_sock" -u "$(id -un)" "$@"
}

stop_mariadb() {
	if [[ -n $my_pid ]] && kill -0 "$my_pid" 2>/dev/null; then
		"$my_admin" --no-defaults --socket="$my_sock" -u "$(id -un)" shutdown >/dev/null 2>&1 ||
			kill -TERM "$my_pid" 2>/dev/null || true
		local i
		for ((i = 0; i < 600; i++)); do
			kill -0 "$my_pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$my_pid" 2>/dev/null; then
			say "MariaDB (pid $my_pid) did not stop in 60 s; killing it"
			kill -KILL "$my_pid" 2>/dev/null || true
		fi
		wait "$my_pid" 2>/dev/null || true
	fi
	my_pid=""
	if [[ -n $my_tmp ]]; then
		rm -rf "$my_tmp"
		my_tmp=""
	fi
}

# start_mariadb SERVER INSTALL_DB initialises a data directory and starts
# SERVER on it.
start_mariadb() {
	local server=$1 installdb=$2
	my_client=$(my_first_command mariadb mysql)
	my_admin=$(my_first_command mariadb-admin mysqladmin)
	if [[ -z $my_client || -z $my_admin ]]; then
		say "MariaDB client not found (install the Debian package mariadb-client)"
		return 1
	fi
	my_user=$(id -un)
	if [[ $(id -u) == 0 ]]; then
		if id mysql >/dev/null 2>&1; then
			my_user=mysql
		else
			say "running as root and there is no 'mysql' OS user: MariaDB runs as root (--user=root)"
			my_user=root
		fi
	fi

	my_tmp=$(mktemp -d "${TMPDIR:-/tmp}/dbprobe-my.XXXXXX")
	on_exit stop_mariadb
	my_sock=$my_tmp/mysqld.sock
	mkdir "$my_tmp/data"

	say "MariaDB $("$server" --version | awk '{print $3}') from $server, data in $my_tmp/data"
	local port attempt aio=""
	for attempt in 1 2 3 4 5; do
		port=$(free_port)
		# A server that died at start three times may have found no
		# native AIO (io_uring or libaio contexts exhausted, or locked
		# memory too small for io_uring): the last tries do without.
		if [[ $attempt == 4 ]]; then
			aio="innodb_use_native_aio = OFF"
			say "MariaDB: trying without native AIO"
		fi
		# --defaults-file: nothing from /etc/mysql applies. Durability stays
		# on (innodb_flush_log_at_trx_commit=1): timings should resemble a
		# real server's. local_infile=ON: the driver's bulk load uses LOAD
		# DATA LOCAL. Load tests use up to 200 workers, hence
		# max_connections. The buffer pool is modest: the machine is shared.
		# performance_schema = ON (MariaDB's default is OFF): the stress
		# experiment's per-statement costs come from its statement digests,
		# and their tests need them.
		cat >"$my_tmp/my.cnf" <<-EOF
			[mysqld]
			user = $my_user
			datadir = $my_tmp/data
			socket = $my_sock
			pid-file = $my_tmp/mysqld.pid
			log-error = $my_tmp/server.log
			port = $port
			bind-address = 127.0.0.1
			skip-name-resolve
			local_infile = ON
			max_connections = 300
			innodb_buffer_pool_size = 256M
			innodb_flush_log_at_trx_commit = 1
			performance_schema = ON
			$aio
		EOF
		if [[ $attempt == 1 ]]; then
			if [[ $my_user != "$(id -un)" ]]; then
				chown -R "$my_user": "$my_tmp"
			fi
			if ! "$installdb" --defaults-file="$my_tmp/my.cnf" --user="$my_user" \
				--auth-root-authentication-method=socket --skip-test-db >"$my_tmp/install.log" 2>&1; then
				cat "$my_tmp/install.log" >&2
				say "mariadb-install-db failed"
				return 1
			fi
		fi
		if [[ $my_user != "$(id -un)" ]]; then
			chown "$my_user": "$my_tmp/my.cnf"
		fi
		"$server" --defaults-file="$my_tmp/my.cnf" </dev/null >"$my_tmp/stdout.log" 2>&1 &
		my_pid=$!
		local i up=0
		for ((i = 0; i < 600; i++)); do
			if ! kill -0 "$my_pid" 2>/dev/null; then
				break
			fi
			if [[ -S $my_sock ]] && port_in_use "$port"; then
				up=1
				break
			fi
			sleep 0.1
		done
		if [[ $up == 1 ]]; then
			break
		fi
		if kill -0 "$my_pid" 2>/dev/null; then
			kill -TERM "$my_pid" 2>/dev/null || true
		fi
		wait "$my_pid" 2>/dev/null || true
		my_pid=""
		if [[ $attempt == 5 ]]; then
			cat "$my_tmp/server.log" "$my_tmp/stdout.log" >&2 2>/dev/null || true
			say "MariaDB did not start"
			return 1
		fi
		say "MariaDB did not start on port $port; trying another"
	done

	local password
	password=$(random_password)
	# The tests set global variables (durability) and create less-privileged
	# users, hence every privilege WITH GRANT OPTION.
	if ! my_client_root -e "
		CREATE DATABASE dbprobe;
		CREATE USER 'dbprobe'@'127.0.0.1' IDENTIFIED BY '$password';
		CREATE USER 'dbprobe'@'localhost' IDENTIFIED BY '$password';
		GRANT ALL PRIVILEGES ON *.* TO 'dbprobe'@'127.0.0.1' WITH GRANT OPTION;
		GRANT ALL PRIVILEGES ON *.* TO 'dbprobe'@'localhost' WITH GRANT OPTION;
	" >"$my_tmp/setup.log" 2>&1; then
		cat "$my_tmp/setup.log" >&2
		say "could not create the dbprobe user and database"
		return 1
	fi
	export DBPROBE_MYSQL_URL="mysql://dbprobe:$password@127.0.0.1:$port/dbprobe"
	say "MariaDB listening on 127.0.0.1:$port (DBPROBE_MYSQL_URL is set)"
}

# start_throwaway_mariadb starts the server when its binaries are found;
# without them it says so and returns 1.
start_throwaway_mariadb() {
	local server installdb
	server=$(my_first_command mariadbd mysqld /usr/sbin/mariadbd /usr/sbin/mysqld)
	installdb=$(my_first_command mariadb-install-db mysql_install_db)
	if [[ -z $server || -z $installdb ]]; then
		say "MariaDB server not found (install the Debian package mariadb-server)"
		return 1
	fi
	start_mariadb "$server" "$installdb"
}

# scripts/lib/myreplica.sh — sourced (after common.sh and mariadb.sh) by
# servers.sh and scripts/with-mariadb-replica: a MariaDB pair of its own, a
# primary (binary log on, server_id 1) and a replica of it (server_id 2,
# read_only, replicating from the primary's first binary log), each with
# its own data directory in one temporary directory and a free port on
# 127.0.0.1; both stop and go at exit.
#
# It starts in the background, beside the other servers, because it is the
# slowest to start (two mariadb-install-db runs): begin_myreplica forks the
# work, end_myreplica waits for it and exports
# DBPROBE_MYSQL_REPLICA_PRIMARY_URL and DBPROBE_MYSQL_REPLICA_URL. The pair
# is apart from the throwaway MariaDB of DBPROBE_MYSQL_URL, which keeps its
# binary log off: a binary log would slow every other MariaDB test.

mr_tmp=""
mr_job=""

# stop_myreplica stops both servers (their pids are in the pair's
# directory: they are not this shell's children) and removes their files.
stop_myreplica() {
	if [[ -n $mr_job ]]; then
		kill -TERM "$mr_job" 2>/dev/null || true
		wait "$mr_job" 2>/dev/null || true
		mr_job=""
	fi
	[[ -n $mr_tmp ]] || return 0
	local name pid i
	for name in replica primary; do
		pid=$(cat "$mr_tmp/$name/server.pid" 2>/dev/null || true)
		[[ -n $pid ]] || continue
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 600; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			say "MariaDB $name (pid $pid) did not stop in 60 s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	rm -rf "$mr_tmp"
	mr_tmp=""
}

# mr_start NAME SERVER_ID EXTRA…: initialises and starts one server of the
# pair, its pid in NAME/server.pid; sets mr_port. Runs in the background
# job.
mr_start() {
	local name=$1 id=$2
	shift 2
	local dir=$mr_tmp/$name
	mkdir -p "$dir/data"
	local attempt i up
	for attempt in 1 2 3 4 5; do
		mr_port=$(free_port)
		# innodb_flush_log_at_trx_commit=1, as the shared MariaDB: timings
		# like a real server's. A small buffer pool: the machine is shared.
		cat >"$dir/my.cnf" <<-EOF
			[mysqld]
			user = $my_user
			datadir = $dir/data
			socket = $dir/mysqld.sock
			pid-file = $dir/mysqld.pid
			log-error = $dir/server.log
			port = $mr_port
			bind-address = 127.0.0.1
			skip-name-resolve
			server_id = $id
			innodb_buffer_pool_size = 64M
			max_connections = 300
			$(printf '%s\n' "$@")
		EOF
		if [[ $my_user != "$(id -un)" ]]; then
			chown -R "$my_user": "$dir"
		fi
		if [[ $attempt == 1 ]] && ! "$mr_installdb" --defaults-file="$dir/my.cnf" --user="$my_user" \
			--auth-root-authentication-method=socket --skip-test-db >"$dir/install.log" 2>&1; then
			cat "$dir/install.log"
			echo "mariadb-install-db failed for the $name"
			return 1
		fi
		"$mr_server" --defaults-file="$dir/my.cnf" </dev/null >"$dir/stdout.log" 2>&1 &
		echo $! >"$dir/server.pid"
		up=0
		for ((i = 0; i < 600; i++)); do
			kill -0 "$(cat "$dir/server.pid")" 2>/dev/null || break
			if [[ -S $dir/mysqld.sock ]] && port_in_use "$mr_port"; then
				up=1
				break
			fi
			sleep 0.1
		done
		[[ $up == 1 ]] && return 0
		kill -TERM "$(cat "$dir/server.pid")" 2>/dev/null || true
		rm -f "$dir/server.pid"
	done
	cat "$dir/server.log" "$dir/stdout.log" 2>/dev/null || true
	echo "MariaDB $name did not start"
	return 1
}

# mr_sql NAME STATEMENTS runs statements as the server's superuser over
# its socket.
mr_sql() {
	"$my_client" --no-defaults --socket="$mr_tmp/$1/mysqld.sock" -u "$(id -un)" -e "$2"
}

# mr_setup starts the pair and writes the variables' exports to
# $mr_tmp/env. Runs in the background job; its output goes to a log.
mr_setup() {
	local password primary_port i
	password=$(random_password)
	mr_start primary 1 "log_bin = $mr_tmp/primary/binlog" "binlog_format = ROW" || return 1
	primary_port=$mr_port
	# Every privilege, as the shared MariaDB's user has: the tests create
	# databases and users on the primary, and the replica replays them.
	mr_sql primary "
		CREATE DATABASE dbprobe;
		CREATE USER 'dbprobe'@'127.0.0.1' IDENTIFIED BY '$password';
		GRANT ALL PRIVILEGES ON *.* TO 'dbprobe'@'127.0.0.1' WITH GRANT OPTION;
		CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY '$password';
		GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1';" || return 1
	mr_start replica 2 "read_only = ON" "relay_log = $mr_tmp/replica/relay" || return 1
	# The replica starts from the primary's first binary log: everything
	# above, the database and the users included, replays on it.
	mr_sql replica "
		CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$primary_port, MASTER_USER='repl', MASTER_PASSWORD='$password', MASTER_USE_GTID=no, MASTER_LOG_FILE='binlog.000001', MASTER_LOG_POS=4;
		START SLAVE;" || return 1
	for ((i = 0; i < 600; i++)); do
		if mr_sql replica "SELECT 1 FROM mysql.user WHERE user = 'dbprobe'" 2>/dev/null | grep -q 1 &&
			mr_sql replica "SHOW DATABASES LIKE 'dbprobe'" 2>/dev/null | grep -q dbprobe; then
			cat >"$mr_tmp/env" <<-EOF
				export DBPROBE_MYSQL_REPLICA_PRIMARY_URL='mysql://dbprobe:$password@127.0.0.1:$primary_port/dbprobe'
				export DBPROBE_MYSQL_REPLICA_URL='mysql://dbprobe:$password@127.0.0.1:$mr_port/dbprobe'
				mr_ports='$primary_port $mr_port'
			EOF
			return 0
		fi
		sleep 0.1
	done
	mr_sql replica "SHOW SLAVE STATUS\G" 2>&1 || true
	echo "the MariaDB replica did not replay the primary's setup in 60 s"
	return 1
}

# begin_myreplica starts the pair in the background when MariaDB's
# binaries are found; without them it says so and returns 1.
begin_myreplica() {
	mr_server=$(my_first_command mariadbd mysqld /usr/sbin/mariadbd /usr/sbin/mysqld)
	mr_installdb=$(my_first_command mariadb-install-db mysql_install_db)
	my_client=$(my_first_command mariadb mysql)
	if [[ -z $mr_server || -z $mr_installdb || -z $my_client ]]; then
		say "MariaDB server or client not found (install the Debian packages mariadb-server and mariadb-client): no MariaDB replica"
		return 1
	fi
	my_user=$(id -un)
	if [[ $(id -u) == 0 ]]; then
		if ! id mysql >/dev/null 2>&1; then
			say "running as root and there is no 'mysql' OS user to run the MariaDB replica pair as"
			return 1
		fi
		my_user=mysql
	fi
	mr_tmp=$(mktemp -d "${TMPDIR:-/tmp}/dbprobe-myrepl.XXXXXX")
	if [[ $my_user != "$(id -un)" ]]; then
		chown "$my_user": "$mr_tmp"
	fi
	on_exit stop_myreplica
	# The job's own EXIT trap must not run the parent's cleanups.
	(
		trap - EXIT INT TERM
		mr_setup
	) >"$mr_tmp/setup.log" 2>&1 &
	mr_job=$!
}

# end_myreplica waits for begin_myreplica's job and exports the pair's
# URLs; it returns 1 when the pair did not start.
end_myreplica() {
	[[ -n $mr_job ]] || return 1
	local status=0
	wait "$mr_job" || status=$?
	mr_job=""
	if [[ $status != 0 || ! -f $mr_tmp/env ]]; then
		cat "$mr_tmp/setup.log" >&2 || true
		say "the MariaDB replica pair did not start"
		return 1
	fi
	# shellcheck disable=SC1091
	source "$mr_tmp/env"
	# shellcheck disable=SC2086
	set -- $mr_ports
	say "MariaDB primary on 127.0.0.1:$1 with a replica on 127.0.0.1:$2 (DBPROBE_MYSQL_REPLICA_PRIMARY_URL, DBPROBE_MYSQL_REPLICA_URL are set)"
}

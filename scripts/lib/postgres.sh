# scripts/lib/postgres.sh — sourced (after common.sh) by scripts/test and
# scripts/with-databases:
# start_throwaway_postgres starts a PostgreSQL of its own (data directory in
# a temporary directory, a free port on 127.0.0.1, a random password), exports
# DBPROBE_POSTGRES_URL, and stops it and removes its files when the calling
# script exits. PostgreSQL refuses to run as root, so as root the server runs
# as the `postgres` OS user.

# find_bindir prints the directory of the PostgreSQL server binaries: the
# newest /usr/lib/postgresql/*/bin with postgres and initdb (pg_config
# --bindir may name the client's), else where initdb and pg_ctl are on PATH.
find_bindir() {
	local dir best=""
	for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V); do
		if [[ -x $dir/postgres && -x $dir/initdb && -x $dir/pg_ctl ]]; then
			best=$dir
		fi
	done
	if [[ -n $best ]]; then
		echo "$best"
		return
	fi
	local initdb pgctl
	initdb=$(command -v initdb || true)
	pgctl=$(command -v pg_ctl || true)
	if [[ -n $initdb && -n $pgctl ]]; then
		dir=$(dirname "$(readlink -f "$initdb")")
		if [[ -x $dir/postgres && -x $dir/pg_ctl ]]; then
			echo "$dir"
			return
		fi
	fi
	if command -v pg_config >/dev/null; then
		dir=$(pg_config --bindir 2>/dev/null || true)
		if [[ -n $dir && -x $dir/postgres && -x $dir/initdb && -x $dir/pg_ctl ]]; then
			echo "$dir"
		fi
	fi
}

pg_tmp=""
pg_data=""
pg_bindir=""
switch_user=0

# as_pg runs a command as the server's OS user: `postgres` when we are root.
as_pg() {
	if [[ $switch_user == 0 ]]; then
		"$@"
	elif command -v runuser >/dev/null; then
		runuser -u postgres -- "$@"
	else
		su postgres -s /bin/bash -c "$(printf '%q ' "$@")"
	fi
}

stop_postgres() {
	if [[ -n $pg_data && -f $pg_data/postmaster.pid ]]; then
		as_pg "$pg_bindir/pg_ctl" stop -D "$pg_data" -m fast -w >/dev/null 2>&1 ||
			as_pg "$pg_bindir/pg_ctl" stop -D "$pg_data" -m immediate -w >/dev/null 2>&1 || true
	fi
	if [[ -n $pg_tmp ]]; then
		rm -rf "$pg_tmp"
	fi
}

start_postgres() {
	pg_bindir=$1
	if [[ $(id -u) == 0 ]]; then
		if ! id postgres >/dev/null 2>&1; then
			say "running as root, and there is no 'postgres' OS user to run the server as (PostgreSQL refuses to run as root); create it or run as a normal user"
			return 1
		fi
		switch_user=1
	fi

	pg_tmp=$(mktemp -d "${TMPDIR:-/tmp}/dbprobe-pg.XXXXXX")
	on_exit stop_postgres
	pg_data=$pg_tmp/data
	local password
	password=$(random_password)
	printf '%s\n' "$password" >"$pg_tmp/pwfile"
	if [[ $switch_user == 1 ]]; then
		chown -R postgres: "$pg_tmp"
	fi

	say "PostgreSQL $("$pg_bindir/postgres" --version | awk '{print $3}') from $pg_bindir, data in $pg_data"
	# C locale: keys sort byte by byte, as in every other database dbprobe drives.
	# --no-sync: the data directory is thrown away; the server itself keeps fsync on.
	if ! as_pg "$pg_bindir/initdb" -D "$pg_data" -U dbprobe --pwfile="$pg_tmp/pwfile" \
		--auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync >"$pg_tmp/initdb.log" 2>&1; then
		cat "$pg_tmp/initdb.log" >&2
		say "initdb failed"
		return 1
	fi
	rm -f "$pg_tmp/pwfile"

	# pg_stat_statements loaded at start when the package ships it (Debian's
	# postgresql-15 does), so that a test can CREATE EXTENSION it in its own
	# database and read per-statement costs (dbprobe stress).
	local preload=""
	if [[ -f $pg_bindir/../lib/pg_stat_statements.so ]]; then
		preload="shared_preload_libraries = 'pg_stat_statements'"
	fi
	local port attempt
	for attempt in 1 2 3 4 5; do
		port=$(free_port)
		# Defaults otherwise; fsync stays on so timings resemble a real server.
		# Load tests use up to 200 workers, hence max_connections.
		cat >"$pg_tmp/dbprobe.conf" <<-EOF
			listen_addresses = '127.0.0.1'
			port = $port
			unix_socket_directories = '$pg_tmp'
			fsync = on
			max_connections = 300
			password_encryption = 'scram-sha-256'
			$preload
		EOF
		if [[ $switch_user == 1 ]]; then
			chown postgres: "$pg_tmp/dbprobe.conf"
		fi
		if ! grep -q "^include = '$pg_tmp/dbprobe.conf'" "$pg_data/postgresql.conf"; then
			printf "include = '%s'\n" "$pg_tmp/dbprobe.conf" >>"$pg_data/postgresql.conf"
		fi
		if as_pg "$pg_bindir/pg_ctl" start -D "$pg_data" -w -t 60 -l "$pg_tmp/server.log" >/dev/null 2>&1; then
			break
		fi
		if [[ $attempt == 5 ]]; then
			cat "$pg_tmp/server.log" >&2 || true
			say "PostgreSQL did not start"
			return 1
		fi
		say "PostgreSQL did not start on port $port; trying another"
	done

	as_pg "$pg_bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$pg_tmp" -p "$port" -U dbprobe -d postgres \
		-c 'CREATE DATABASE dbprobe' >/dev/null
	export DBPROBE_POSTGRES_URL="postgres://dbprobe:$password@127.0.0.1:$port/dbprobe?sslmode=disable"
	say "PostgreSQL listening on 127.0.0.1:$port (DBPROBE_POSTGRES_URL is set)"
}

# start_throwaway_postgres starts the server when its binaries are found;
# without them it says so and returns 1.
start_throwaway_postgres() {
	local bindir
	bindir=$(find_bindir)
	if [[ -z $bindir ]]; then
		say "PostgreSQL server not found (install the Debian package postgresql)"
		return 1
	fi
	start_postgres "$bindir"
}

# scripts/lib/pgstandby.sh — sourced after postgres.sh by servers.sh and
# scripts/with-replica: start_throwaway_pgstandby starts a PostgreSQL pair
# of its own, a primary and a streaming standby of it made by
# pg_basebackup -R (each on a free port of 127.0.0.1, hot_standby on), and
# exports DBPROBE_POSTGRES_REPLICA_PRIMARY_URL and
# DBPROBE_POSTGRES_REPLICA_URL; both stop and go at exit.
#
# The pair is apart from the throwaway PostgreSQL of DBPROBE_POSTGRES_URL
# on purpose: a standby on the same machine replays CREATE TABLESPACE at
# the primary's own directory, so the tests that place tables on a
# directory would have two servers writing in it.

rp_tmp=""

stop_pgstandby_pair() {
	local dir
	for dir in "$rp_tmp/standby" "$rp_tmp/primary"; do
		if [[ -n $rp_tmp && -f $dir/postmaster.pid ]]; then
			as_pg "$pg_bindir/pg_ctl" stop -D "$dir" -m fast -w >/dev/null 2>&1 ||
				as_pg "$pg_bindir/pg_ctl" stop -D "$dir" -m immediate -w >/dev/null 2>&1 || true
		fi
	done
	if [[ -n $rp_tmp ]]; then
		rm -rf "$rp_tmp"
	fi
}

# rp_start DIR LOGNAME: starts the server of DIR on a free port, written to
# its postgresql.auto.conf (read last), and sets rp_port.
rp_start() {
	local dir=$1 log=$2 attempt
	for attempt in 1 2 3 4 5; do
		rp_port=$(free_port)
		printf 'port = %s\n' "$rp_port" >>"$dir/postgresql.auto.conf"
		if as_pg "$pg_bindir/pg_ctl" start -D "$dir" -w -t 60 -l "$rp_tmp/$log" >/dev/null 2>&1; then
			return 0
		fi
	done
	cat "$rp_tmp/$log" >&2 || true
	say "PostgreSQL ($log) did not start"
	return 1
}

start_pgstandby_pair() {
	pg_bindir=$1
	if [[ $(id -u) == 0 ]]; then
		if ! id postgres >/dev/null 2>&1; then
			say "running as root, and there is no 'postgres' OS user to run the server as"
			return 1
		fi
		switch_user=1
	fi
	rp_tmp=$(mktemp -d "${TMPDIR:-/tmp}/dbprobe-pgrepl.XXXXXX")
	on_exit stop_pgstandby_pair
	local password
	password=$(random_password)
	printf '%s\n' "$password" >"$rp_tmp/pwfile"
	if [[ $switch_user == 1 ]]; then
		chown -R postgres: "$rp_tmp"
	fi
	if ! as_pg "$pg_bindir/initdb" -D "$rp_tmp/primary" -U dbprobe --pwfile="$rp_tmp/pwfile" \
		--auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync >"$rp_tmp/initdb.log" 2>&1; then
		cat "$rp_tmp/initdb.log" >&2
		say "initdb failed"
		return 1
	fi
	rm -f "$rp_tmp/pwfile"
	# initdb's pg_hba.conf lets 127.0.0.1 replicate with a password; WAL
	# level replica and ten WAL senders are PostgreSQL's defaults.
	cat >>"$rp_tmp/primary/postgresql.auto.conf" <<-EOF
		listen_addresses = '127.0.0.1'
		unix_socket_directories = '$rp_tmp'
		max_connections = 200
		password_encryption = 'scram-sha-256'
	EOF
	rp_start "$rp_tmp/primary" primary.log || return 1
	local primary_port=$rp_port
	as_pg "$pg_bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$rp_tmp" -p "$primary_port" -U dbprobe -d postgres \
		-c 'CREATE DATABASE dbprobe' >/dev/null

	# The password goes through a file only the server's user reads, never
	# the command line.
	printf '127.0.0.1:%s:*:dbprobe:%s\n' "$primary_port" "$password" >"$rp_tmp/pgpass"
	chmod 600 "$rp_tmp/pgpass"
	if [[ $switch_user == 1 ]]; then
		chown postgres: "$rp_tmp/pgpass"
	fi
	# --checkpoint=fast: the default, spread, waits for a checkpoint paced
	# over checkpoint_completion_target of checkpoint_timeout, which made
	# the pair take about 100 s to start on a busy machine.
	if ! as_pg env PGPASSFILE="$rp_tmp/pgpass" "$pg_bindir/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U dbprobe \
		-D "$rp_tmp/standby" -R -X stream --no-sync --checkpoint=fast >"$rp_tmp/basebackup.log" 2>&1; then
		cat "$rp_tmp/basebackup.log" >&2
		say "pg_basebackup failed"
		return 1
	fi
	printf 'hot_standby = on\n' >>"$rp_tmp/standby/postgresql.auto.conf"
	rp_start "$rp_tmp/standby" standby.log || return 1
	export DBPROBE_POSTGRES_REPLICA_PRIMARY_URL="postgres://dbprobe:$password@127.0.0.1:$primary_port/dbprobe?sslmode=disable"
	export DBPROBE_POSTGRES_REPLICA_URL="postgres://dbprobe:$password@127.0.0.1:$rp_port/dbprobe?sslmode=disable"
	say "PostgreSQL primary on 127.0.0.1:$primary_port with a standby on 127.0.0.1:$rp_port (DBPROBE_POSTGRES_REPLICA_PRIMARY_URL, DBPROBE_POSTGRES_REPLICA_URL are set)"
}

# start_throwaway_pgstandby starts the pair when PostgreSQL's binaries are
# found; without them it says so and returns 1.
start_throwaway_pgstandby() {
	local bindir
	bindir=$(find_bindir)
	if [[ -z $bindir ]]; then
		say "PostgreSQL server not found (install the Debian package postgresql)"
		return 1
	fi
	start_pgstandby_pair "$bindir"
}

# scripts/lib/pgstandby.sh — sourced after postgres.sh by servers.sh and
# scripts/with-replica: start_postgres_standby makes a streaming standby of
# the throwaway PostgreSQL that start_throwaway_postgres started
# (pg_basebackup -R, its own free port on 127.0.0.1, hot_standby on),
# exports DBPROBE_POSTGRES_REPLICA_URL, and stops it at exit.

standby_data=""

stop_postgres_standby() {
	if [[ -n $standby_data && -f $standby_data/postmaster.pid ]]; then
		as_pg "$pg_bindir/pg_ctl" stop -D "$standby_data" -m fast -w >/dev/null 2>&1 ||
			as_pg "$pg_bindir/pg_ctl" stop -D "$standby_data" -m immediate -w >/dev/null 2>&1 || true
	fi
}

start_postgres_standby() {
	local url=$DBPROBE_POSTGRES_URL
	# postgres://dbprobe:PASSWORD@127.0.0.1:PORT/dbprobe?sslmode=disable
	local rest=${url#postgres://dbprobe:}
	local password=${rest%%@*}
	local primary_port=${rest#*@127.0.0.1:}
	primary_port=${primary_port%%/*}
	standby_data=$pg_tmp/standby
	on_exit stop_postgres_standby

	# The password goes through a file only the server's user reads, never
	# the command line.
	printf '127.0.0.1:%s:*:dbprobe:%s\n' "$primary_port" "$password" >"$pg_tmp/pgpass"
	chmod 600 "$pg_tmp/pgpass"
	if [[ $switch_user == 1 ]]; then
		chown postgres: "$pg_tmp/pgpass"
	fi
	if ! as_pg env PGPASSFILE="$pg_tmp/pgpass" "$pg_bindir/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U dbprobe \
		-D "$standby_data" -R -X stream --no-sync >"$pg_tmp/basebackup.log" 2>&1; then
		cat "$pg_tmp/basebackup.log" >&2
		say "pg_basebackup failed"
		return 1
	fi
	local port attempt
	for attempt in 1 2 3 4 5; do
		port=$(free_port)
		# postgresql.auto.conf is read last: its port overrides the one the
		# primary's included dbprobe.conf sets.
		cat >>"$standby_data/postgresql.auto.conf" <<-EOF2
			port = $port
			hot_standby = on
		EOF2
		if as_pg "$pg_bindir/pg_ctl" start -D "$standby_data" -w -t 60 -l "$pg_tmp/standby.log" >/dev/null 2>&1; then
			break
		fi
		if [[ $attempt == 5 ]]; then
			cat "$pg_tmp/standby.log" >&2 || true
			say "the PostgreSQL standby did not start"
			return 1
		fi
	done
	export DBPROBE_POSTGRES_REPLICA_URL="postgres://dbprobe:$password@127.0.0.1:$port/dbprobe?sslmode=disable"
	say "PostgreSQL standby of 127.0.0.1:$primary_port listening on 127.0.0.1:$port (DBPROBE_POSTGRES_REPLICA_URL is set)"
}

# start_throwaway_pgstandby starts the standby when the throwaway
# PostgreSQL is running; without it it says so and returns 1.
start_throwaway_pgstandby() {
	if [[ -z ${DBPROBE_POSTGRES_URL:-} || -z $pg_bindir ]]; then
		say "no throwaway PostgreSQL to make a standby of"
		return 1
	fi
	start_postgres_standby
}

# scripts/lib/redis.sh — sourced (after common.sh) by scripts/test and
# scripts/with-databases:
# start_throwaway_redis starts a Redis server of its own (working directory
# in a temporary directory, a free port on 127.0.0.1, a random password),
# exports DBPROBE_REDIS_URL, and stops it and removes its files when the
# calling script exits.

redis_tmp=""
redis_pid=""

stop_redis() {
	if [[ -n $redis_pid ]]; then
		# SIGTERM: Redis finishes its AOF write and exits; wait reaps it so
		# that nothing is left running when the script ends.
		kill "$redis_pid" 2>/dev/null || true
		wait "$redis_pid" 2>/dev/null || true
		redis_pid=""
	fi
	if [[ -n $redis_tmp ]]; then
		rm -rf "$redis_tmp"
		redis_tmp=""
	fi
}

start_redis() {
	local server=$1 password port attempt
	redis_tmp=$(mktemp -d "${TMPDIR:-/tmp}/dbprobe-redis.XXXXXX")
	on_exit stop_redis
	password=$(random_password)
	say "Redis $("$server" --version | sed -n 's/.* v=\([^ ]*\).*/\1/p') from $server, files in $redis_tmp"

	for attempt in 1 2 3 4 5; do
		port=$(free_port)
		# Not daemonized: we keep the pid to stop it. AOF on, fsync every
		# second (Redis's default policy), so that the driver's durability
		# settings mean something; no RDB snapshots. 32 logical databases
		# give parallel tests room (internal/testdb hands each its own).
		# The password goes through a config file on stdin ("-"), not the
		# command line, where ps would show it to every user.
		printf 'requirepass %s\n' "$password" |
			"$server" - --bind 127.0.0.1 --port "$port" --protected-mode yes \
				--dir "$redis_tmp" --save '' --appendonly yes --appendfsync everysec \
				--databases 32 --logfile "$redis_tmp/server.log" >"$redis_tmp/stdout.log" 2>&1 &
		redis_pid=$!
		if wait_for_port "$port" 30; then
			break
		fi
		stop_redis_process
		if [[ $attempt == 5 ]]; then
			cat "$redis_tmp/server.log" >&2 || true
			say "Redis did not start"
			return 1
		fi
		say "Redis did not start on port $port; trying another"
	done

	export DBPROBE_REDIS_URL="redis://:$password@127.0.0.1:$port/0"
	say "Redis listening on 127.0.0.1:$port (DBPROBE_REDIS_URL is set)"
}

# stop_redis_process stops a server that did not come up, keeping its files
# (the log says why) for the next attempt and the final cleanup.
stop_redis_process() {
	if [[ -n $redis_pid ]]; then
		kill "$redis_pid" 2>/dev/null || true
		wait "$redis_pid" 2>/dev/null || true
		redis_pid=""
	fi
}

# start_throwaway_redis starts the server when redis-server is found;
# without it, it says so and returns 1.
start_throwaway_redis() {
	local server
	server=$(command -v redis-server || true)
	if [[ -z $server ]]; then
		say "Redis server not found (install the Debian package redis-server)"
		return 1
	fi
	start_redis "$server"
}

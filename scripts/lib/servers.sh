# scripts/lib/servers.sh — sourced by scripts/test and scripts/with-databases:
# starts every throwaway database server whose binaries are installed
# (PostgreSQL; a second PostgreSQL with a streaming standby of it, for the
# replica tests; MariaDB; a second MariaDB with a replica of it, started in
# the background beside the others; Redis), each on 127.0.0.1 with its own
# data directory, and stops them all when the calling script exits. A server that
# is missing or does not start is reported; its integration tests then skip,
# or fail under CI=true.

here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=common.sh
source "$here/common.sh"
for lib in postgres pgstandby mariadb myreplica redis; do
	if [[ -f $here/$lib.sh ]]; then
		# shellcheck disable=SC1090
		source "$here/$lib.sh"
	fi
done

# start_servers starts each server; it returns 1 when any could not start.
# A server that did not start leaves its reason in DBPROBE_<SERVER>_UNAVAILABLE
# (see server_unavailable), which its tests quote.
start_servers() {
	local ok=0 name replica=0
	# The MariaDB pair takes longest (two data directories to initialise):
	# it starts first, in the background, and is waited for last.
	if declare -F begin_myreplica >/dev/null; then
		if start_logged DBPROBE_MYSQL_REPLICA_UNAVAILABLE begin_myreplica; then
			replica=1
		else
			say "MariaDB replica: its integration tests will skip (or fail under CI=true)"
			ok=1
		fi
	fi
	for name in postgres pgstandby mariadb redis; do
		if declare -F "start_throwaway_$name" >/dev/null; then
			if ! start_logged "$(unavailable_var "$name")" "start_throwaway_$name"; then
				say "$name: its integration tests will skip (or fail under CI=true)"
				ok=1
			fi
		fi
	done
	if [[ $replica == 1 ]] && ! start_logged DBPROBE_MYSQL_REPLICA_UNAVAILABLE end_myreplica; then
		say "MariaDB replica: its integration tests will skip (or fail under CI=true)"
		ok=1
	fi
	return "$ok"
}

# unavailable_var prints the variable that holds why server $1 did not start.
unavailable_var() {
	case $1 in
	postgres) echo DBPROBE_POSTGRES_UNAVAILABLE ;;
	pgstandby) echo DBPROBE_POSTGRES_REPLICA_UNAVAILABLE ;;
	mariadb) echo DBPROBE_MYSQL_UNAVAILABLE ;;
	redis) echo DBPROBE_REDIS_UNAVAILABLE ;;
	esac
}

# start_logged VAR FUNCTION runs FUNCTION in this shell (its exports must
# stay), with what it prints to stderr kept and then printed; when it fails,
# the line of that output that reads most like the cause goes to VAR.
start_logged() {
	local var=$1 log rc=0
	shift
	log=$(mktemp)
	"$@" 2>"$log" || rc=$?
	cat "$log" >&2
	if [[ $rc != 0 ]]; then
		server_unavailable "$var" "$(last_error "$log")"
	fi
	rm -f "$log"
	return "$rc"
}

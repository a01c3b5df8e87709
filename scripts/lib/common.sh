# scripts/lib/common.sh — sourced first by scripts/test and
# scripts/with-databases: messages, free ports on 127.0.0.1, Go on PATH, and
# one EXIT trap that runs every server's cleanup (each lib registers its own
# with on_exit, so starting several servers never loses a trap).

say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }

# port_in_use succeeds when something listens on 127.0.0.1:$1.
port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# free_port prints a port on 127.0.0.1 that nothing listens on.
free_port() {
	local port
	for _ in $(seq 1 200); do
		port=$((20000 + RANDOM % 40000))
		if ! port_in_use "$port"; then
			echo "$port"
			return
		fi
	done
	say "no free port found on 127.0.0.1"
	return 1
}

# wait_for_port waits up to $2 seconds for something to listen on 127.0.0.1:$1.
wait_for_port() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		if port_in_use "$1"; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# server_unavailable VAR REASON exports VAR (DBPROBE_<SERVER>_UNAVAILABLE)
# set to why a server did not start, in one line: the tests that need the
# server quote it when they skip, or fail under CI=true, so that the reason
# shows beside the failure and not only in the start's log above it.
server_unavailable() {
	export "$1=$(printf '%s' "$2" | tr '\n\t' '  ' | cut -c1-400)"
}

# last_error prints the first line of the given logs that reads as an error
# (or else their last line), for server_unavailable: the first, because a
# server's log ends in consequences ("[ERROR] Aborting").
last_error() {
	local line
	line=$(cat "$@" 2>/dev/null | grep -aiE 'error|fatal|fail|denied|cannot|could not|not found' |
		grep -avE '\] Aborting$' | head -n 1)
	if [[ -z $line ]]; then
		line=$(cat "$@" 2>/dev/null | tail -n 1)
	fi
	printf '%s' "${line:-no log}"
}

cleanups=()

# on_exit registers a command to run when the script exits, however it
# exits; cleanups run newest first.
on_exit() {
	cleanups+=("$*")
	trap run_cleanups EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

run_cleanups() {
	local rc=$? i
	trap - EXIT INT TERM
	for ((i = ${#cleanups[@]} - 1; i >= 0; i--)); do
		eval "${cleanups[i]}" || true
	done
	exit "$rc"
}

# random_password prints 32 hex digits.
random_password() {
	od -An -tx1 -N16 /dev/urandom | tr -d ' \n'
}

# ensure_go puts Go on PATH when it is installed but not on it.
ensure_go() {
	if ! command -v go >/dev/null; then
		for dir in /usr/local/go/bin /usr/lib/go/bin "$HOME/go/bin" "$HOME/sdk/go/bin"; do
			if [[ -x $dir/go ]]; then
				PATH=$dir:$PATH
				break
			fi
		done
	fi
	if ! command -v go >/dev/null; then
		say "go not found on PATH (nor in /usr/local/go/bin); install Go 1.26"
		exit 1
	fi
}

# Step times. Each script records how long its steps took (step_done) in one
# file that the scripts it calls share ($DBPROBE_STEP_TIMES), and the
# outermost one prints them at exit, one line each, with the total.

# now prints the time since the epoch in seconds, with microseconds.
now() {
	local t=$EPOCHREALTIME
	echo "${t/,/.}"
}

# seconds_since prints the seconds since $1 (a time from now), to 0.1 s.
seconds_since() {
	awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'
}

# steps_init makes this script the one that prints the step times when it
# exits, unless a script that called it already is.
steps_init() {
	if [[ -n ${DBPROBE_STEP_TIMES:-} ]]; then
		return
	fi
	DBPROBE_STEP_TIMES=$(mktemp)
	export DBPROBE_STEP_TIMES
	steps_start=$(now)
	on_exit "print_steps; rm -f '$DBPROBE_STEP_TIMES'"
}

# step_done records that step $1, begun at $2 (a time from now), is over.
step_done() {
	if [[ -n ${DBPROBE_STEP_TIMES:-} ]]; then
		printf '%s\t%s\n' "$1" "$(seconds_since "$2")" >>"$DBPROBE_STEP_TIMES"
	fi
}

print_steps() {
	local name secs
	say "time taken by each step:"
	while IFS=$'\t' read -r name secs; do
		say "$(printf '  %-14s %7s s' "$name" "$secs")"
	done <"$DBPROBE_STEP_TIMES"
	say "$(printf '  %-14s %7s s' total "$(seconds_since "$steps_start")")"
}

# trimpath adds -trimpath to GOFLAGS, exported, so that the tests' own go
# build has it too. Without it the build cache keys every package of the
# module by the directory of the checkout as well as by its content: each
# fresh clone (CI's) compiled the whole module again, three times (race,
# fuzzing, and the binary the tests build). With it, a clone reuses what
# an earlier run compiled from the same code, wherever it was. File names
# in stack traces then start at the module path (github.com/dbprobe/dbprobe/internal/…).
trimpath() {
	case " ${GOFLAGS:-} " in
	*" -trimpath "*) ;;
	*) export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath" ;;
	esac
}

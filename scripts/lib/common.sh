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

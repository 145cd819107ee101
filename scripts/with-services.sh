#!/usr/bin/env bash
# Runs a command with a throw-away MinIO and OpenFGA listening on free
# 127.0.0.1 ports, e.g.
#
#   scripts/with-services.sh go test -race ./...
#
# The command sees:
#   LANCECAT_TEST_S3_ENDPOINT    host:port of MinIO (no scheme, plain HTTP)
#   LANCECAT_TEST_S3_ACCESS_KEY  MinIO root user
#   LANCECAT_TEST_S3_SECRET_KEY  MinIO root password
#   LANCECAT_TEST_S3_REGION      us-east-1
#   LANCECAT_TEST_OPENFGA_URL    http://127.0.0.1:<port> (OpenFGA HTTP API, memory datastore)
#
# Both services and their temporary data/log directory are always torn down
# when this script exits (normally, on error, or on INT/TERM/HUP); the
# command's exit status is propagated. Binaries come from scripts/tools.sh
# (built once from the Go module proxy, then cached).
#
# Knobs: LANCECAT_SERVICES_TIMEOUT (readiness timeout per service, seconds,
# default 60), LANCECAT_SERVICES_KEEP_LOGS=1 (keep the service logs in a
# directory that is printed at exit; data is still removed), LANCECAT_CACHE
# (see tools.sh), TMPDIR.
# shellcheck disable=SC2317 # functions below are invoked from traps
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
READY_TIMEOUT=${LANCECAT_SERVICES_TIMEOUT:-60}
S3_ACCESS_KEY=lancecat
S3_SECRET_KEY=lancecat-secret-key
S3_REGION=us-east-1
LOG_TAIL_LINES=30

log() { echo "with-services: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

[[ $# -ge 1 ]] || {
	echo "usage: $0 <command> [args...]" >&2
	exit 2
}
command -v curl >/dev/null 2>&1 || die "curl is required (readiness checks)"
[[ "$READY_TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "LANCECAT_SERVICES_TIMEOUT must be a positive number of seconds, got '$READY_TIMEOUT'"

MINIO_BIN=$("$SCRIPT_DIR/tools.sh" minio) || die "could not install MinIO (see output above)"
OPENFGA_BIN=$("$SCRIPT_DIR/tools.sh" openfga) || die "could not install OpenFGA (see output above)"

TMP_ROOT=${TMPDIR:-/tmp}
TMP_ROOT=${TMP_ROOT%/}
MAIN_PID=${BASHPID:-$$}

# Remove work dirs left behind by runs that were SIGKILLed (their traps never
# ran); a dir is only touched if its owner pid file names a dead process.
for stale in "$TMP_ROOT"/lancecat-services.*; do
	[[ -f "$stale/owner.pid" ]] || continue
	owner=$(cat "$stale/owner.pid" 2>/dev/null) || continue
	[[ "$owner" =~ ^[0-9]+$ ]] || continue
	kill -0 "$owner" 2>/dev/null || [[ -d /proc/$owner ]] || rm -rf "$stale"
done

WORK=$(mktemp -d "$TMP_ROOT/lancecat-services.XXXXXX")
echo "$MAIN_PID" >"$WORK/owner.pid"
MINIO_LOG="$WORK/minio.log"
OPENFGA_LOG="$WORK/openfga.log"
MINIO_PID=
OPENFGA_PID=
CMD_PID=

# Services get SIGTERM from the kernel if this script dies without running
# its traps (e.g. SIGKILL), where available (util-linux setpriv, Linux only).
LAUNCH=()
if command -v setpriv >/dev/null 2>&1 && setpriv --help 2>&1 | grep -q -- --pdeathsig; then
	LAUNCH=(setpriv --pdeathsig TERM --)
fi
# Background jobs of a non-interactive shell start with SIGINT/SIGQUIT
# ignored; undo that for the user's command so Ctrl-C behaves normally.
RESET_SIGNALS=()
if env --default-signal=INT true >/dev/null 2>&1; then
	RESET_SIGNALS=(env "--default-signal=INT,QUIT" --)
fi

print_tail() { # <name> <file>
	[[ -e "$2" ]] || return 0
	if [[ ! -s "$2" ]]; then
		echo "----- $1 log is empty -----" >&2
		return 0
	fi
	echo "----- last $LOG_TAIL_LINES lines of $1 log ($2) -----" >&2
	tail -n "$LOG_TAIL_LINES" "$2" >&2 || true
	echo "----- end of $1 log -----" >&2
}

stop_pid() { # <pid>
	local pid=$1 i
	[[ -n "$pid" ]] || return 0
	kill -0 "$pid" 2>/dev/null || {
		wait "$pid" 2>/dev/null || true
		return 0
	}
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do # up to 10s for a graceful stop
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "pid $pid did not stop after SIGTERM; sending SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
}

cleanup() {
	local status=$?
	# A signal can hit a freshly forked background child before it execs a
	# service; such a child must not run the parent's teardown.
	[[ ${BASHPID:-$$} == "$MAIN_PID" ]] || exit "$status"
	trap - EXIT INT TERM HUP
	set +e
	if [[ $status -ne 0 ]]; then
		print_tail MinIO "$MINIO_LOG"
		print_tail OpenFGA "$OPENFGA_LOG"
	fi
	stop_pid "$OPENFGA_PID"
	stop_pid "$MINIO_PID"
	if [[ ${LANCECAT_SERVICES_KEEP_LOGS:-} == 1 ]]; then
		local keep
		if keep=$(mktemp -d "$TMP_ROOT/lancecat-services-logs.XXXXXX"); then
			cp "$WORK"/*.log "$keep"/ 2>/dev/null
			log "service logs kept in $keep"
		fi
	fi
	rm -rf "$WORK"
	exit "$status"
}

on_signal() { # <signal name> <exit status>
	local sig=$1 status=$2 i
	[[ ${BASHPID:-$$} == "$MAIN_PID" ]] || exit "$status"
	trap - INT TERM HUP
	log "caught SIG$sig, shutting down"
	if [[ -n "$CMD_PID" ]] && kill -0 "$CMD_PID" 2>/dev/null; then
		# Without env --default-signal the command ignores INT; use TERM.
		[[ $sig == INT && ${#RESET_SIGNALS[@]} -eq 0 ]] && sig=TERM
		kill -s "$sig" "$CMD_PID" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do # give it up to 10s to wind down
			kill -0 "$CMD_PID" 2>/dev/null || break
			sleep 0.1
		done
	fi
	exit "$status"
}

trap cleanup EXIT
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap 'on_signal HUP 129' HUP

# free_ports <n>: prints n distinct currently-free 127.0.0.1 TCP ports,
# space separated, chosen by the kernel (bind to port 0). A port could in
# theory be taken again before the service binds it; start_service retries.
free_ports() {
	local n=$1
	if command -v python3 >/dev/null 2>&1 && python3 - "$n" 2>/dev/null <<'EOF'; then
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
		return 0
	fi
	# Fallback: random ports that ss(8) reports as unused.
	local ports=() p
	while ((${#ports[@]} < n)); do
		p=$((20000 + RANDOM % 30000))
		[[ " ${ports[*]-} " == *" $p "* ]] && continue
		if [[ -z "$(ss -Htan "sport = :$p" 2>/dev/null)" ]]; then
			ports+=("$p")
		fi
	done
	echo "${ports[*]}"
}

# wait_ready <name> <pid> <url> <logfile>
# 0 = ready; 2 = process exited because its port was taken (retry);
# 1 = exited for another reason or timed out.
wait_ready() {
	local name=$1 pid=$2 url=$3 logfile=$4 rc
	local deadline=$((SECONDS + READY_TIMEOUT))
	while ((SECONDS < deadline)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			rc=0
			wait "$pid" 2>/dev/null || rc=$?
			if grep -qiE 'address already in use|port is already in use|bind: ' "$logfile" 2>/dev/null; then
				return 2
			fi
			log "error: $name exited with status $rc before becoming ready (its log follows below)"
			return 1
		fi
		if curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	log "error: $name not ready at $url after ${READY_TIMEOUT}s (LANCECAT_SERVICES_TIMEOUT; its log follows below)"
	return 1
}

start_minio() {
	local attempt port console rc
	mkdir -p "$WORK/minio/data" "$WORK/minio/certs" "$WORK/minio/home"
	for attempt in 1 2 3 4 5; do
		read -r port console <<<"$(free_ports 2)"
		# HOME is redirected so MinIO does not create ~/.minio.
		HOME="$WORK/minio/home" \
			MINIO_ROOT_USER="$S3_ACCESS_KEY" \
			MINIO_ROOT_PASSWORD="$S3_SECRET_KEY" \
			MINIO_SITE_REGION="$S3_REGION" \
			MINIO_BROWSER=off \
			MINIO_UPDATE=off \
			MINIO_CI_CD=1 \
			${LAUNCH[@]+"${LAUNCH[@]}"} "$MINIO_BIN" server \
			--address "127.0.0.1:$port" \
			--console-address "127.0.0.1:$console" \
			--certs-dir "$WORK/minio/certs" \
			"$WORK/minio/data" >"$MINIO_LOG" 2>&1 </dev/null &
		MINIO_PID=$!
		rc=0
		wait_ready MinIO "$MINIO_PID" "http://127.0.0.1:$port/minio/health/live" "$MINIO_LOG" || rc=$?
		case $rc in
		0)
			MINIO_PORT=$port
			return 0
			;;
		2) log "MinIO: port $port/$console was taken, retrying ($attempt/5)" ;;
		*) return 1 ;;
		esac
		MINIO_PID=
		rm -rf "$WORK/minio/data" && mkdir -p "$WORK/minio/data"
	done
	log "error: MinIO could not bind a free port after 5 attempts (its log follows below)"
	return 1
}

start_openfga() {
	local attempt http grpc rc
	for attempt in 1 2 3 4 5; do
		read -r http grpc <<<"$(free_ports 2)"
		${LAUNCH[@]+"${LAUNCH[@]}"} "$OPENFGA_BIN" run \
			--datastore-engine memory \
			--http-addr "127.0.0.1:$http" \
			--grpc-addr "127.0.0.1:$grpc" \
			--playground-enabled=false \
			--metrics-enabled=false \
			>"$OPENFGA_LOG" 2>&1 </dev/null &
		OPENFGA_PID=$!
		rc=0
		wait_ready OpenFGA "$OPENFGA_PID" "http://127.0.0.1:$http/healthz" "$OPENFGA_LOG" || rc=$?
		case $rc in
		0)
			OPENFGA_PORT=$http
			return 0
			;;
		2) log "OpenFGA: port $http/$grpc was taken, retrying ($attempt/5)" ;;
		*) return 1 ;;
		esac
		OPENFGA_PID=
	done
	log "error: OpenFGA could not bind a free port after 5 attempts (its log follows below)"
	return 1
}

start_minio || exit 1
start_openfga || exit 1

export LANCECAT_TEST_S3_ENDPOINT="127.0.0.1:$MINIO_PORT"
export LANCECAT_TEST_S3_ACCESS_KEY="$S3_ACCESS_KEY"
export LANCECAT_TEST_S3_SECRET_KEY="$S3_SECRET_KEY"
export LANCECAT_TEST_S3_REGION="$S3_REGION"
export LANCECAT_TEST_OPENFGA_URL="http://127.0.0.1:$OPENFGA_PORT"
log "MinIO at $LANCECAT_TEST_S3_ENDPOINT, OpenFGA at $LANCECAT_TEST_OPENFGA_URL"

# Run the command as a background job and wait for it, so INT/TERM sent to
# this script are handled immediately (and forwarded) rather than after the
# command finishes. `<&0` keeps stdin attached (bash would use /dev/null).
${RESET_SIGNALS[@]+"${RESET_SIGNALS[@]}"} "$@" <&0 &
CMD_PID=$!
status=0
wait "$CMD_PID" || status=$?
CMD_PID=
if [[ $status -ne 0 ]]; then
	log "command exited with status $status"
fi
exit "$status"

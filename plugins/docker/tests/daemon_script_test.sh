#!/usr/bin/env bash
# scripts/docker-daemon starts a daemon past the pid files a killed daemon leaves behind, once
# their numbers name other processes, and refuses to start a second daemon over a live one.
# It runs a daemon of its own (own data root and socket) beside any other.
#
#   daemon_script_test.sh SOURCE_DIR
set -uo pipefail
src=${1:?usage: daemon_script_test.sh SOURCE_DIR}
skip() {
  if [ "${CI:-}" = true ]; then echo "FAIL (CI=true): $*" >&2; exit 1; fi
  echo "SKIP: $*"; exit 77
}
[ "$(id -u)" = 0 ] || skip "starting dockerd needs root"
command -v dockerd >/dev/null || skip "no dockerd (apt-get install docker.io)"

root=$(mktemp -d /var/tmp/cordon-dd-test.XXXXXX)
export CORDON_DOCKER_ROOT=$root CORDON_DOCKER_SOCKET=$root/d.sock
script=$src/scripts/docker-daemon
sleep 600 &
stranger=$!
cleanup() {
  "$script" stop >/dev/null 2>&1
  kill "$stranger" 2>/dev/null
  rm -rf "$root"
}
trap cleanup EXIT
failures=0
check() {
  if eval "$2"; then echo "ok: $1"; else echo "FAILED: $1" >&2; failures=$((failures + 1)); fi
}

# What a daemon killed with its session leaves: both pid files, now naming a live stranger.
mkdir -p "$root/exec/containerd"
echo "$stranger" >"$root/dockerd.pid"
echo "$stranger" >"$root/exec/containerd/containerd.pid"
out=$(timeout 60 "$script" start 2>&1)
echo "$out"
check "the daemon starts past pid files that name another program" "$script status"
check "the stale files are named as removed" "grep -q 'stale pid file $root/dockerd.pid' <<<\"\$out\""
check "the stranger the files named is left alone" "kill -0 $stranger"
daemon=$(cat "$root/dockerd.pid" 2>/dev/null)
check "the pid file now names the running dockerd" \
  "[ \"\$(readlink /proc/$daemon/exe)\" = \"\$(command -v dockerd)\" ]"

# A live dockerd's pid file is kept: with its socket gone, a second start waits, then refuses.
mv "$root/d.sock" "$root/d.sock.away"
out=$(timeout 60 "$script" start 2>&1)
rc=$?
echo "$out"
check "a start over a live daemon that does not answer is refused" "[ $rc -ne 0 ]"
check "the refusal names the live daemon" "grep -q 'neither answers' <<<\"\$out\""
check "the live daemon's pid file is kept" "[ \"\$(cat $root/dockerd.pid)\" = $daemon ]"
check "no second dockerd was started" "[ \$(pgrep -c -f -- '--data-root $root/data') -eq 1 ]"
mv "$root/d.sock.away" "$root/d.sock"

"$script" stop
check "stop ends the daemon it started" "! kill -0 $daemon 2>/dev/null"
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed" >&2; exit 1; }

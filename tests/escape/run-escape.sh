#!/usr/bin/env bash
# Runs the escape suite as root (`root`), as the unprivileged test user (`user`), or as root
# against the docker backend (`docker`: only the tests tagged [docker]).
#   run-escape.sh root|user|docker BINARY [CATCH-ARGS...]
# Exit 77 tells ctest the run was skipped; the reason is printed. Under CI=true a missing
# prerequisite is a failure instead.
#
# docker: CORDON_TEST_DOCKER_SOCKET (default /var/run/docker.sock) and CORDON_TEST_IMAGE (default
# cordon-test/busybox:2); the ctest fixture cordon_docker starts the daemon and makes the image.
set -uo pipefail

mode="${1:?usage: run-escape.sh root|user|docker BINARY [ARGS...]}"
binary="${2:?usage: run-escape.sh root|user|docker BINARY [ARGS...]}"
shift 2
binary="$(readlink -f "$binary")"
user="${CORDON_TEST_USER:-cordon-test}"
name="escape-as-$mode"
[[ "$mode" == docker ]] && name="escape-docker"

skip_or_fail() {
  if [[ "${CI:-}" == "true" ]]; then
    echo "$name: FAILED (CI=true): $*" >&2
    exit 1
  fi
  echo "$name: skipped: $*" >&2
  exit 77
}

if [[ "$(id -u)" -ne 0 ]]; then
  # Not a prerequisite failure: a non-root developer runs the suite directly, as themself.
  echo "$name: skipped: needs root (uid $(id -u)); run '$binary' directly to test as" \
       "yourself" >&2
  exit 77
fi

case "$mode" in
  root)
    exec "$binary" "$@"
    ;;
  user)
    if ! id -u "$user" >/dev/null 2>&1; then
      skip_or_fail "user '$user' does not exist (create it with 'scripts/test-user')"
    fi
    if ! runuser -u "$user" -- test -x "$binary"; then
      skip_or_fail "'$binary' is not executable by '$user' (the build tree must be traversable:" \
                   "chmod o+rx on every directory above it)"
    fi
    # A directory under /run where the user can put a socket of its own ("sockets under the
    # host's /run cannot be reached"), as a session bus would be.
    install -d -m 1777 /run/cordon-escape || skip_or_fail "cannot make /run/cordon-escape"
    # Tests tagged [root] need a root caller by definition; everything else runs as the user.
    # cd / so that the user's lack of access to the current directory does not matter.
    cd / && exec runuser -u "$user" -- "$binary" "~[root]" "$@"
    ;;
  docker)
    socket="${CORDON_TEST_DOCKER_SOCKET:-/var/run/docker.sock}"
    image="${CORDON_TEST_IMAGE:-cordon-test/busybox:2}"
    api() { curl -s --max-time 10 --unix-socket "$socket" "$@"; }
    if ! api -f http://docker/_ping >/dev/null 2>&1; then
      skip_or_fail "no docker daemon answers at $socket (scripts/docker-daemon start)"
    fi
    if [[ "$(api -o /dev/null -w '%{http_code}' "http://docker/images/$image/json")" != 200 ]]; then
      skip_or_fail "the image '$image' is not on the daemon at $socket (scripts/docker-image)"
    fi
    CORDON_ESCAPE_BACKEND=docker exec "$binary" "[docker]" "$@"
    ;;
  *)
    echo "run-escape.sh: unknown mode '$mode' (root, user or docker)" >&2
    exit 2
    ;;
esac

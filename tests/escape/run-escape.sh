#!/usr/bin/env bash
# Runs the escape suite as root (`root`) or as the unprivileged test user (`user`).
#   run-escape.sh root|user BINARY [CATCH-ARGS...]
# Exit 77 tells ctest the run was skipped; the reason is printed. Under CI=true a missing
# prerequisite is a failure instead.
set -uo pipefail

mode="${1:?usage: run-escape.sh root|user BINARY [ARGS...]}"
binary="${2:?usage: run-escape.sh root|user BINARY [ARGS...]}"
shift 2
binary="$(readlink -f "$binary")"
user="${CORDON_TEST_USER:-cordon-test}"

skip_or_fail() {
  if [[ "${CI:-}" == "true" ]]; then
    echo "escape-as-$mode: FAILED (CI=true): $*" >&2
    exit 1
  fi
  echo "escape-as-$mode: skipped: $*" >&2
  exit 77
}

if [[ "$(id -u)" -ne 0 ]]; then
  # Not a prerequisite failure: a non-root developer runs the suite directly, as themself.
  echo "escape-as-$mode: skipped: needs root (uid $(id -u)); run '$binary' directly to test as" \
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
    # Tests tagged [root] need a root caller by definition; everything else runs as the user.
    # cd / so that the user's lack of access to the current directory does not matter.
    cd / && exec runuser -u "$user" -- "$binary" "~[root]" "$@"
    ;;
  *)
    echo "run-escape.sh: unknown mode '$mode' (root or user)" >&2
    exit 2
    ;;
esac

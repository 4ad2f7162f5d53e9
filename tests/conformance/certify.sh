#!/usr/bin/env bash
# Certifies one backend with `cordon certify`, as root (`root`) or as the unprivileged test
# user (`user`); `docker` certifies the docker backend on the test daemon and image (the ctest
# fixture cordon_docker starts them) over BASE, a policy every case extends; `broken` runs a
# corpus whose one case must fail and checks that certify says so; `malformed` one that certify
# must refuse to run (CRD7002); `unusable` certifies a backend that proves nothing here
# (seatbelt off macOS) and checks that every case of CORPUS is skipped with REASON, none passed,
# the verdict is CRD1004, and a run on it is refused by name with the same reason.
#   certify.sh root|user|broken|malformed CORDON BACKEND [CORPUS]
#   certify.sh unusable CORDON BACKEND CORPUS REASON
#   certify.sh docker CORDON docker BASE
#   certify.sh ssh CORDON ssh FIXTURE   (the sshd of scripts/sshd, started by the ctest fixture)
#   certify.sh ssh-cordon CORDON ssh FIXTURE   the same host, running CORDON there too
#   certify.sh e2b CORDON e2b FIXTURE   (the local E2B stand-in of plugins/e2b/tests/mock-fixture)
# Exit 77 tells ctest the run was skipped; under CI=true a missing prerequisite fails instead.
set -uo pipefail
mode=${1:?usage} cordon=$(readlink -f "${2:?usage}") backend=${3:?usage} corpus=${4:-}
user="${CORDON_TEST_USER:-cordon-test}"

skip_or_fail() {
  if [[ "${CI:-}" == "true" ]]; then
    echo "certify ($mode): FAILED (CI=true): $*" >&2
    exit 1
  fi
  echo "certify ($mode): skipped: $*" >&2
  exit 77
}

case "$mode" in
  root)
    [[ "$(id -u)" -eq 0 ]] || skip_or_fail "needs root"
    exec "$cordon" certify --backend "$backend"
    ;;
  user)
    [[ "$(id -u)" -eq 0 ]] || exec "$cordon" certify --backend "$backend"
    id -u "$user" >/dev/null 2>&1 || skip_or_fail "user '$user' does not exist (scripts/test-user)"
    cd / && exec runuser -u "$user" -- "$cordon" certify --backend "$backend"
    ;;
  docker)
    socket="${CORDON_TEST_DOCKER_SOCKET:-/var/run/docker.sock}"
    image="${CORDON_TEST_IMAGE:-cordon-test/busybox:2}"
    curl -sf --max-time 10 --unix-socket "$socket" http://docker/_ping >/dev/null 2>&1 ||
      skip_or_fail "no docker daemon answers at $socket (scripts/docker-daemon start)"
    config=$(mktemp /tmp/cordon-certify-config-XXXXXX.toml)
    trap 'rm -f "$config"' EXIT
    printf '[backends.docker]\nimage = "%s"\nsocket = "%s"\n' "$image" "$socket" >"$config"
    "$cordon" certify --backend docker --config "$config" --policy "$corpus"
    ;;
  ssh | ssh-cordon)
    fixture=$corpus
    [[ -s "$fixture/ports" ]] || skip_or_fail "no sshd fixture at $fixture (scripts/sshd start)"
    config=$(mktemp /tmp/cordon-certify-config-XXXXXX.toml)
    trap 'rm -f "$config"' EXIT
    printf '[backends.ssh]\nhost = "127.0.0.1"\nport = %s\nuser = "%s"\nidentity = "%s"\nknown_hosts = "%s"\n' \
      "$(head -n 1 "$fixture/ports")" "$(cat "$fixture/user")" "$fixture/client_key" \
      "$fixture/known_hosts" >"$config"
    [[ $mode == ssh-cordon ]] && printf 'cordon = "%s"\n' "$cordon" >>"$config"
    "$cordon" certify --backend ssh --config "$config"
    ;;
  e2b)
    fixture=$corpus
    [[ -s "$fixture/port" ]] || skip_or_fail "no E2B stand-in at $fixture (mock-fixture start)"
    config=$(mktemp /tmp/cordon-certify-config-XXXXXX.toml)
    trap 'rm -f "$config"' EXIT
    url="http://127.0.0.1:$(cat "$fixture/port")"
    printf '[backends.e2b]\napi_url = "%s"\nenvd_url = "%s"\napi_key_env = "CORDON_E2B_TEST_KEY"\ndownload = true\n' \
      "$url" "$url" >"$config"
    CORDON_E2B_TEST_KEY=$(cat "$fixture/key") "$cordon" certify --backend e2b --config "$config"
    ;;
  broken)
    out=$("$cordon" certify --backend "$backend" --corpus "$corpus" 2>&1)
    status=$?
    echo "$out"
    [[ $status -eq 1 ]] || { echo "expected exit 1, got $status" >&2; exit 1; }
    grep -q "FAILED: an inherited variable that is granted: attack: expected denied" <<<"$out" ||
      { echo "the failed case is not named" >&2; exit 1; }
    grep -q "NOT certified" <<<"$out" || { echo "no verdict" >&2; exit 1; }
    ;;
  malformed)
    out=$("$cordon" certify --backend "$backend" --corpus "$corpus" 2>&1)
    status=$?
    echo "$out"
    [[ $status -ne 0 ]] || { echo "a malformed corpus was run" >&2; exit 1; }
    grep -q "CRD7002" <<<"$out" || { echo "not refused with CRD7002" >&2; exit 1; }
    grep -q "env.grant.toml" <<<"$out" || { echo "the file is not named" >&2; exit 1; }
    grep -q "unknown expectation 'held'" <<<"$out" || { echo "the mistake is not named" >&2; exit 1; }
    ;;
  unusable)
    reason=${5:?usage}
    cases=$(cat "$corpus"/*.toml | grep -c '^\[\[case\]\]')
    out=$("$cordon" certify --backend "$backend" 2>&1)
    status=$?
    echo "$out"
    [[ $status -ne 0 ]] || { echo "certify of an unusable backend exited 0" >&2; exit 1; }
    skipped=$(grep -c "^    skipped: .*: unusable here: $reason" <<<"$out")
    [[ $skipped -eq $cases ]] || { echo "$skipped of $cases cases skipped with the reason" >&2; exit 1; }
    ! grep -Eq "cases held|FAILED|^certified" <<<"$out" || { echo "a case ran" >&2; exit 1; }
    ! grep -E '^[a-z]+\.[a-z._]+ ' <<<"$out" | grep -vq "unclaimed untested" ||
      { echo "a capability was claimed or tested" >&2; exit 1; }
    grep -q "error\[CRD1004\]: backend '$backend' is not usable here: $reason" <<<"$out" ||
      { echo "no CRD1004 verdict naming the reason" >&2; exit 1; }
    run=$("$cordon" run --backend "$backend" -- /bin/true 2>&1)
    status=$?
    echo "$run"
    [[ $status -ne 0 ]] || { echo "a run on an unusable backend exited 0" >&2; exit 1; }
    grep -q "error\[CRD1004\]: backend '$backend' is not available here: $reason" <<<"$run" ||
      { echo "the run was not refused by name with the reason" >&2; exit 1; }
    ;;
  *)
    echo "certify.sh: unknown mode '$mode'" >&2
    exit 2
    ;;
esac

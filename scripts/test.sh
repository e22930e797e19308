#!/usr/bin/env bash
# The whole test suite: installs what it needs, then lint (ESLint and Prettier), typecheck and build,
# then every ava test; prints the suite's duration (installs excluded) against its budget and its ten
# slowest tests. It fails when a test left a process running or an app user behind, when the tests
# changed the checkout, or when the suite took more than twice its budget (ADR 0226).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
start=$(date +%s)
# The suite's budget on CI's kind of machine (2 cores); twice it fails the run.
budget=600
checks=$(mktemp -d)
log=$(mktemp)
tree=$(mktemp)
export SVC_TEST_LEDGER
SVC_TEST_LEDGER=$(mktemp)
trap 'rm -rf "$checks" "$log" "$tree" "$SVC_TEST_LEDGER"' EXIT

# The checks run side by side (ESLint alone is half of them; ADR 0158). The type check of the whole
# tree also emits it into dist/, so the programs the tests start (the CLI, `svc serve`, the lane's
# built checkouts) run compiled from this very checkout instead of through tsx at each start.
check() {
  local name=$1
  shift
  if ! "$@" >"$checks/$name.log" 2>&1; then echo "$name" >>"$checks/failed"; fi
}
check eslint npx eslint . &
check prettier npx prettier --list-different . &
# Import cycles, found by dpdm: a third of ESLint's time when it was ESLint's import-x/no-cycle (ADR 0227).
check cycles npm run --silent cycles &
# Every test file declares its tier, and no quick file starts a platform (ADR 0226).
check test-tiers node --import tsx scripts/test-tiers.ts &
# The infraspec reference page is generated from the schema; a stale page fails the run.
check infraspec-reference node --import tsx scripts/generate-infraspec-reference.ts --check &
# The OpenAPI documents, their TypeScript types and the API reference pages match the routers (ADR 0230).
check openapi node --import tsx scripts/generate-openapi.ts --check &
{
  # dist/ is emitted afresh: nothing compiled from a file since deleted stays behind.
  rm -rf dist
  # The browser tests load the built pages (dist/web). They are built first: the build replaces
  # dist/web whole, and the type check then adds the page modules a test imports (web/…/prometheus).
  check web-pages node --import tsx scripts/build-web.ts
  check typecheck npx tsc -p tsconfig.json --noEmit false
  # Commands bundled beside their compiled module (ADR 0198): the tests run them as users do.
  check cli-bundles node --import tsx scripts/build-cli.ts
  check typecheck-web npx tsc --noEmit -p web/tsconfig.json
} &
wait
for name in eslint prettier cycles test-tiers infraspec-reference openapi web-pages typecheck cli-bundles typecheck-web; do
  echo "== $name"
  cat "$checks/$name.log"
done
if [ -f "$checks/failed" ]; then
  if grep -qx prettier "$checks/failed"; then echo "unformatted files (listed above): run npm run format" >&2; fi
  echo "failed: $(tr '\n' ' ' <"$checks/failed")" >&2
  exit 1
fi
echo "== checks took $(($(date +%s) - start))s"

echo "== tests"
# The tests, and the programs they start, run from the dist/ just built (ava.compiled.config.mjs,
# test/helpers/cli.ts; ADR 0158). Files named on the command line are test/… sources: their
# compiled copies run.
export SVC_FROM_SOURCE=0
# Platforms the tests start run apps as host processes unless a test asks for containers (ADR 0219).
export SVC_CONTAINER_RUNTIME="${SVC_CONTAINER_RUNTIME:-native}"
files=()
for arg in "$@"; do
  case "$arg" in
  test/*.ts) files+=("dist/${arg%.ts}.js") ;;
  *) files+=("$arg") ;;
  esac
done
set -- "${files[@]+"${files[@]}"}"
# Most test files wait on real processes (servers, deploys, PostgreSQL) more than they compute, so
# more files run at once than there are cores (ADR 0158); SVC_TEST_CONCURRENCY overrides.
# App users (ADR 0047) made during the run, by the test workers or by programs they start, are removed
# once every test has ended, those no process runs as (ADR 0191). Workers leave them alone meanwhile:
# users are host-wide, and two files may run apps of the same name at once.
export SVC_TEST_RUNNER_REMOVES_APP_USERS=1
users_before=$(getent passwd | cut -d: -f1 | grep '^svc-app-' | sort || true)
node --import tsx scripts/tracked-changes.ts --save "$tree"
status=0
# The log keeps each line's time, from which the slowest files are found (ADR 0211).
npx ava --config ava.compiled.config.mjs --concurrency "${SVC_TEST_CONCURRENCY:-4}" "$@" 2>&1 |
  while IFS= read -r line; do
    printf '%s\n' "$line"
    printf '%s\t%s\n' "$EPOCHREALTIME" "$line" >>"$log"
  done || status=$?
node --import tsx scripts/slowest-tests.ts "$log"
# SVC_TEST_LOG keeps the timed log, from which `scripts/slowest-tests.ts --weights` refreshes
# test/file-weights.json.
if [ -n "${SVC_TEST_LOG:-}" ]; then cp "$log" "$SVC_TEST_LOG"; fi
# Nothing left behind (ADR 0226): processes a test left running are stopped and named, then the app
# users the run made are removed; either left over, or a change to the checkout, fails the run.
node --import tsx scripts/leftover-processes.ts --ledger "$SVC_TEST_LEDGER" || status=1
if [ "$(id -u)" -eq 0 ]; then
  left=()
  for user in $(comm -13 <(echo "$users_before") <(getent passwd | cut -d: -f1 | grep '^svc-app-' | sort || true)); do
    if pgrep -u "$user" >/dev/null || ! userdel "$user" 2>/dev/null; then left+=("$user"); fi
  done
  if [ "${#left[@]}" -gt 0 ]; then
    echo "== app users the run made and could not remove (in use): ${left[*]}"
    status=1
  else
    echo "== app users the run left: none"
  fi
fi
node --import tsx scripts/tracked-changes.ts --compare "$tree" || status=1
took=$(($(date +%s) - start))
echo "== suite took ${took}s (installs excluded) against a budget of ${budget}s on a 2-core machine"
if [ "$took" -gt $((2 * budget)) ]; then
  echo "== the suite took more than twice its budget: failed (a doubling is caught; ADR 0226)" >&2
  status=1
fi
exit "$status"

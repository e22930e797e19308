#!/usr/bin/env bash
# The whole test suite: installs what it needs, then lint (ESLint and Prettier), typecheck and every ava
# test; prints the suite's duration (installs excluded) and its ten slowest tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
start=$(date +%s)
echo "== lint"
npx eslint .
npx prettier --check . >/dev/null || { npx prettier --list-different .; echo "unformatted files: run npm run format" >&2; exit 1; }
echo "== typecheck"; npx tsc --noEmit -p tsconfig.json; npx tsc --noEmit -p web/tsconfig.json
# The browser tests load the built pages (dist/web): build them from this checkout's sources.
echo "== web pages"; node --import tsx scripts/build-web.ts
echo "== tests"
# Most test files wait on real processes (servers, deploys, PostgreSQL) more than they compute, so
# more files run at once than there are cores (ADR 0158); SVC_TEST_CONCURRENCY overrides.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
npx ava --concurrency "${SVC_TEST_CONCURRENCY:-4}" "$@" 2>&1 | tee "$log" || status=$?
node --import tsx scripts/slowest-tests.ts "$log"
echo "== suite took $(( $(date +%s) - start ))s (installs excluded)"
exit "$status"

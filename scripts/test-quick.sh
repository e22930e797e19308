#!/usr/bin/env bash
# The quick tier (ADR 0226): the unit and in-process tests (each file declaring `// tier: quick`), for
# the inner loop, with the dependencies already installed; budget 90 s on a 2-core machine. The
# checkout is transpiled into dist/ by esbuild first (no type check; about 2 s), and the compiled
# tests run, as `npm test` runs them. `npm test` remains the whole suite. Arguments go to ava
# (`--match`, `--verbose`).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
node --import tsx scripts/transpile.ts
mapfile -t files < <(node --import tsx scripts/test-tiers.ts --list quick | sed -e 's|^|dist/|' -e 's|\.ts$|.js|')
export SVC_FROM_SOURCE=0
status=0
npx ava --config ava.compiled.config.mjs --concurrency "${SVC_TEST_CONCURRENCY:-4}" "${files[@]}" "$@" 2>&1 |
  while IFS= read -r line; do
    printf '%s\n' "$line"
    printf '%s\t%s\n' "$EPOCHREALTIME" "$line" >>"$log"
  done || status=$?
node --import tsx scripts/slowest-tests.ts "$log" | sed -n '/ten slowest test files/,$p'
echo "== quick tier: ${#files[@]} files in $(($(date +%s) - start))s against a budget of 90s"
exit "$status"

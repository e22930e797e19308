#!/usr/bin/env bash
# The whole test suite: installs what it needs, then lint, typecheck and every ava test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
start=$(date +%s)
echo "== lint"; npx eslint .; npx prettier --check . >/dev/null || { npx prettier --list-different .; echo "unformatted files: run npm run format" >&2; exit 1; }
echo "== typecheck"; npx tsc --noEmit -p tsconfig.json; npx tsc --noEmit -p web/tsconfig.json
# The browser tests load the built pages (dist/web): build them from this checkout's sources.
echo "== web pages"; node --import tsx scripts/build-web.ts
echo "== tests"; npx ava "$@"
echo "== suite took $(( $(date +%s) - start ))s"

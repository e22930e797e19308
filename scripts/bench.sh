#!/usr/bin/env bash
# Runs every benchmark in bench/ (or the ones named) and prints their figures.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
if [ "$#" -gt 0 ]; then files=("$@"); else files=(bench/*.ts); fi
for f in "${files[@]}"; do
  [ "$f" = bench/bench-args.ts ] && continue
  echo "== $f"
  node --import tsx "$f"
done

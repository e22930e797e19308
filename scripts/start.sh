#!/usr/bin/env bash
# Starts the platform on its embedded default with the sample apps: installs npm packages when
# absent, builds, copies the sample apps into a git-tracked apps folder once, then runs `svc serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.svc-installed
if [ ! -f "$stamp" ] || [ package.json -nt "$stamp" ]; then
  # `npm install` honours package-lock.json; `npm ci` is avoided because npm 11 rejects this
  # lock over optional per-platform packages it omitted itself (see docs/adr/0007).
  npm install --no-audit --no-fund
  touch "$stamp"
fi
npx tsc -p tsconfig.build.json
export SVC_DATA_DIR="${SVC_DATA_DIR:-$PWD/.data}"
export SVC_APPS_DIR="${SVC_APPS_DIR:-$SVC_DATA_DIR/apps}"
if [ ! -d "$SVC_APPS_DIR" ]; then
  mkdir -p "$SVC_APPS_DIR"
  cp -R fixtures/apps/. "$SVC_APPS_DIR/"
  git -C "$SVC_APPS_DIR" init -q -b main
  git -C "$SVC_APPS_DIR" add -A
  git -C "$SVC_APPS_DIR" -c user.name=svc -c user.email=svc@localhost commit -q -m "sample apps"
  echo "sample apps copied into $SVC_APPS_DIR (a git repo: commit spec changes there)" >&2
fi
exec node bin/svc.js serve "$@"

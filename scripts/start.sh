#!/usr/bin/env bash
# Starts the platform on its embedded default with the sample apps: installs npm packages when
# absent, installs the PostgreSQL server when absent, readies containers where podman is installed, builds (the server and the web pages), copies the sample apps into a git-tracked apps folder once, then runs `svc serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.svc-installed
if [ ! -f "$stamp" ] || [ package.json -nt "$stamp" ]; then
  # `npm install` honours package-lock.json; `npm ci` is avoided because npm 11 rejects this
  # lock over optional per-platform packages it omitted itself (see docs/adr/0007).
  npm install --no-audit --no-fund
  touch "$stamp"
fi
# The managed PostgreSQL server of app databases (unless an external one is configured) runs from
# the Debian packages: install them the way scripts/ensure-deps.sh does for the tests.
if [ -z "${SVC_POSTGRES_HOST:-}" ] && [ "${SVC_POSTGRES_MANAGED:-true}" != "false" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "installing the PostgreSQL server (Debian package postgresql) for app databases" >&2
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    echo "need root to install postgresql: run \`apt-get install postgresql\` as root, or set SVC_POSTGRES_HOST" >&2; return 1; fi; }
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql postgresql-client >/dev/null
fi
# Apps run in their own images where podman is installed (ADR 0219): the rest of the container
# runtime (runc, the registry, mmdebstrap, skopeo, gpg) and the offline base images (ADR 0222) are
# made ready; without podman, apps run as host processes.
if command -v podman >/dev/null 2>&1 && [ "${SVC_CONTAINER_RUNTIME:-auto}" != "native" ]; then
  missing=()
  for pair in runc:runc docker-registry:docker-registry mmdebstrap:mmdebstrap skopeo:skopeo gpg:gpg; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing the container runtime's Debian packages: ${missing[*]}" >&2
    if [ "$(id -u)" -eq 0 ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
      echo "need root to install ${missing[*]}: apps run as host processes until they are installed" >&2
    fi
  fi
  bash scripts/base-images.sh || echo "base images not built: builds FROM node:/ruby: reach Docker Hub instead" >&2
fi
npx tsc -p tsconfig.build.json
# Commands bundled into one file each (ADR 0198): svc validate answers sooner.
node --import tsx scripts/build-cli.ts
# The operator console (8800) and the knowledge admin dashboard (7702): dist/web.
node --import tsx scripts/build-web.ts
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

#!/usr/bin/env bash
# Installs what the test suite needs when it is absent: npm packages, the PostgreSQL server,
# promtool and Chromium (Debian packages), git, the container runtime (podman, runc, the registry,
# mmdebstrap, skopeo, gpg) and its offline base images. Safe to run again; does nothing when
# everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[ensure-deps] %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    log "need root to run: $*"; return 1; fi
}

apt_updated=0
apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then log "apt-get not found; install $* by hand"; return 1; fi
  if [ "$apt_updated" -eq 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  log "installing Debian packages: $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# npm packages (better-sqlite3 compiles from source here: a minute or two the first time).
stamp=node_modules/.svc-installed
if [ ! -f "$stamp" ] || [ package.json -nt "$stamp" ] || { [ -f package-lock.json ] && [ package-lock.json -nt "$stamp" ]; }; then
  log "installing npm packages"
  # `npm install` honours package-lock.json; `npm ci` is avoided because npm 11 rejects this
  # lock over optional per-platform packages it omitted itself (see docs/adr/0007).
  npm install --no-audit --no-fund
  touch "$stamp"
fi

command -v git >/dev/null 2>&1 || apt_install git
# ssh-keygen: the production-admission tests sign commits with SSH keys (git verify-commit).
command -v ssh-keygen >/dev/null 2>&1 || apt_install openssh-client

# PostgreSQL server binaries (initdb, pg_ctl, postgres, pg_dump, pg_restore) for throwaway clusters.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt_install postgresql postgresql-client
fi

# promtool checks the generated Prometheus configuration and rules.
if ! command -v promtool >/dev/null 2>&1; then
  # The package would try to start a Prometheus server; we only want the binaries.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee /usr/sbin/policy-rc.d >/dev/null && as_root chmod +x /usr/sbin/policy-rc.d
    trap 'as_root rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt_install prometheus
fi

# Chromium runs the browser tests of the web pages (driven by playwright-core; docs/adr/0133).
if [ ! -x /usr/bin/chromium ]; then
  apt_install chromium
fi

# The container runtime of the local driver (ADR 0219): podman with runc, the Distribution registry,
# mmdebstrap for the offline base images (ADR 0222), skopeo and gpg for image signatures (ADR 0223),
# and dockerd for the swarm driver's tests, which start their own swarm (ADR 0229).
missing=()
for pair in podman:podman runc:runc docker-registry:docker-registry mmdebstrap:mmdebstrap skopeo:skopeo gpg:gpg dockerd:docker.io; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
if [ "${#missing[@]}" -gt 0 ]; then apt_install "${missing[@]}" uidmap; fi
# The base images the container tests and sample apps build FROM: built once per machine, cached.
bash scripts/base-images.sh

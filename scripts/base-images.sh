#!/usr/bin/env bash
# Builds the base images that the sample apps and the container tests start FROM, offline: Debian
# bookworm root filesystems made with mmdebstrap from Debian's archive, imported into podman's
# storage under their docker.io names (ADR 0222). The platform mirrors them into its managed
# registry, which registries.conf puts in front of docker.io. Cached per machine: a second run
# imports from the cached tarballs, or does nothing when the images are present.
#
#   docker.io/library/node:20-bookworm-slim   minbase + this host's Node.js 20 and npm
#   docker.io/library/ruby:3.1-slim-bookworm  minbase + Debian's ruby (3.1)
#
# Usage: scripts/base-images.sh [--force]
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[base-images] %s\n' "$*" >&2; }
# Raised whenever what goes into an image changes: older images are rebuilt.
version=2
force=0
[ "${1:-}" = "--force" ] && force=1
for tool in podman mmdebstrap; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    log "$tool is not installed (apt-get install podman runc mmdebstrap): no base images built"
    exit 1
  fi
done
cache="${SVC_BASE_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svc/base-images}"
mkdir -p "$cache"
podman_() { podman --runtime runc "$@"; }
exclude=(--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*')

rootfs() { # name, packages (comma-separated): a cached minbase root filesystem tarball
  local tar="$cache/$1-rootfs.tar"
  if [ ! -s "$tar" ]; then
    log "building the $1 root filesystem with mmdebstrap (about 20 s)"
    mmdebstrap --quiet --format=tar --variant=minbase ${2:+--include="$2"} "${exclude[@]}" bookworm "$tar.tmp"
    mv "$tar.tmp" "$tar"
  fi
  printf '%s' "$tar"
}

image() { # reference, rootfs tarball, extra Containerfile lines, context folder
  local ref=$1 tar=$2 extra=$3 context=$4
  if [ "$force" -eq 0 ] && podman_ image exists "$ref" &&
    [ "$(podman_ image inspect --format '{{index .Config.Labels "io.svc.base-image-version"}}' "$ref")" = "$version" ]; then
    log "$ref present"
    return
  fi
  local base="localhost/svc-rootfs/$(basename "$tar" -rootfs.tar):latest" old
  old=$(podman_ image inspect --format '{{.Id}}' "$ref" 2>/dev/null || true)
  podman_ import --quiet "$tar" "$base" >/dev/null
  printf 'FROM %s\n%s\nLABEL io.svc.base-image=%s io.svc.base-image-version=%s\n' "$base" "$extra" "$ref" "$version" >"$context/Containerfile"
  podman_ build --quiet --pull=never -t "$ref" -f "$context/Containerfile" "$context" >/dev/null
  podman_ rmi "$base" >/dev/null 2>&1 || true
  # The build it replaces goes, unless a container or another image still uses it.
  if [ -n "$old" ]; then podman_ rmi "$old" >/dev/null 2>&1 || true; fi
  log "$ref built"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Node.js: the host's own Node 20 and npm (Debian bookworm's nodejs is 18), on a minbase root.
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" != 20 ]; then log "this host's Node.js is $(node --version), not 20: node:20-bookworm-slim not built"; else
  mkdir -p "$work/node"
  cp "$(command -v node)" "$work/node/node"
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  cp -R "$npm_dir" "$work/node/npm"
  # The host's CA bundle: where outbound TLS passes a host-trusted proxy, npm in the image trusts it too.
  cp /etc/ssl/certs/ca-certificates.crt "$work/node/ca-certificates.crt"
  node_tar=$(rootfs node ca-certificates)
  image docker.io/library/node:20-bookworm-slim "$node_tar" "COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
ENV NODE_VERSION=$(node -p process.versions.node) NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD [\"node\"]" "$work/node"
fi

mkdir -p "$work/ruby"
ruby_tar=$(rootfs ruby ruby)
image docker.io/library/ruby:3.1-slim-bookworm "$ruby_tar" 'CMD ["irb"]' "$work/ruby"

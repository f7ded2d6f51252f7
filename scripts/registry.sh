#!/usr/bin/env bash
# The tools ImagesE2E pushes the images with, as docs/install.md tells users to: skopeo (Debian's
# package) and a container registry on localhost (the CNCF Distribution `registry`, built from the
# Go module proxy and cached; cold build about 2 minutes on 2 cores). Prints the registry binary.
set -euo pipefail
VERSION=${REGISTRY_VERSION:-v3.1.2}
ROOT=${TBMQ_TOOLS:-$HOME/.cache/tbmq-tools}
BIN=$ROOT/bin/registry-$VERSION
SUDO=(); [ "$(id -u)" -eq 0 ] || SUDO=(sudo)
if ! command -v skopeo >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get install -y --no-install-recommends skopeo >/tmp/tbmq-apt.log 2>&1 \
    || { "${SUDO[@]}" apt-get update >>/tmp/tbmq-apt.log 2>&1; "${SUDO[@]}" apt-get install -y --no-install-recommends skopeo >>/tmp/tbmq-apt.log 2>&1; } \
    || { echo "error: could not install skopeo (see /tmp/tbmq-apt.log)" >&2; exit 1; }
fi
if [ ! -x "$BIN" ]; then
  export PATH="$PATH:/usr/local/go/bin"
  command -v go >/dev/null || { echo "error: Go is needed to build the registry from the module proxy" >&2; exit 1; }
  mkdir -p "$ROOT/build" "$ROOT/bin"
  CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" GOBIN="$ROOT/build" \
    go install -ldflags="-s -w" "github.com/distribution/distribution/v3/cmd/registry@$VERSION" >&2
  mv "$ROOT/build/registry" "$BIN"
fi
echo "$BIN"

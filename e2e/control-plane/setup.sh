#!/usr/bin/env bash
# Builds the local Kubernetes control plane the operator's *E2E tests run against, from the Go module
# proxy only (no Docker, no kubelet): etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl and kwok (a fake kubelet that marks pods Running/Ready).
# Cached: a second run with the same versions returns at once. Cold build on 2 cores: about 9 minutes,
# about 4 GB of Go build cache. Output: $K8S_CP_ROOT/bin (default ~/.cache/tbmq-k8s).
set -euo pipefail

ROOT=${K8S_CP_ROOT:-$HOME/.cache/tbmq-k8s}
K8S_VERSION=${K8S_VERSION:-1.33.13}      # every k8s.io/* staging module must exist as v0.33.x on the proxy
KWOK_VERSION=${KWOK_VERSION:-v0.7.0}
ETCD_VERSION=${ETCD_VERSION:-v3.5.21}    # the etcd client version k8s 1.33 requires
BIN=$ROOT/bin
STAMP="k8s=$K8S_VERSION etcd=$ETCD_VERSION kwok=$KWOK_VERSION"
if [ -f "$BIN/.stamp" ] && [ "$(cat "$BIN/.stamp")" = "$STAMP" ]; then
  exit 0
fi
command -v go >/dev/null || [ -x /usr/local/go/bin/go ] || {
  echo "error: Go is needed to build the e2e control plane (etcd, kube-apiserver, kwok) from the module proxy" >&2
  exit 1
}
export PATH="$PATH:/usr/local/go/bin"
command -v openssl >/dev/null || { echo "error: openssl is needed (make deps installs it)" >&2; exit 1; }
mkdir -p "$BIN" "$ROOT/build"
export GOFLAGS="-trimpath -buildvcs=false" CGO_ENABLED=0
log() { echo "[control-plane setup $(date +%T)] $*"; }

# etcd: server/v3's go.mod has replace directives, so `go install pkg@version` refuses it; building it
# as a dependency of a throwaway module works because a dependency's replaces are ignored.
if [ ! -x "$BIN/etcd" ]; then
  log "building etcd $ETCD_VERSION"
  d=$ROOT/build/etcd; mkdir -p "$d"; cd "$d"
  [ -f go.mod ] || go mod init local/etcdbuild >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  go build -ldflags="-s -w" -o "$BIN/etcd" go.etcd.io/etcd/server/v3
fi

# Kubernetes: require k8s.io/kubernetes from a throwaway module that replaces each staging module
# (./staging/... in its go.mod) with the published v0.x version of the same release.
log "building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl $K8S_VERSION"
d=$ROOT/build/k8s; rm -rf "$d"; mkdir -p "$d"; cd "$d"
STAGING_VERSION=v0.${K8S_VERSION#1.}
KMOD=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
{
  echo "module local/k8sbuild"
  echo
  grep -m1 '^go ' "$KMOD"
  grep '^godebug' "$KMOD" || true
  echo
  echo "require k8s.io/kubernetes v$K8S_VERSION"
  echo
  echo "replace ("
  for m in $(grep -E '^\s+k8s.io/[^ ]+ => ./staging/' "$KMOD" | awk '{print $1}'); do
    if (cd / && GOFLAGS= go list -m -json "$m@$STAGING_VERSION" >/dev/null 2>&1); then
      echo "	$m => $m $STAGING_VERSION"
    else # not published (sample modules); never imported by the binaries we build
      mkdir -p "stub/$m"; echo "module $m" > "stub/$m/go.mod"
      echo "	$m => ./stub/$m"
    fi
  done
  echo ")"
} > go.mod
COMPONENTS="kube-apiserver kube-controller-manager kube-scheduler kubectl"
PKGS=""; PKGSV=""
for c in $COMPONENTS; do PKGS="$PKGS k8s.io/kubernetes/cmd/$c"; PKGSV="$PKGSV k8s.io/kubernetes/cmd/$c@v$K8S_VERSION"; done
MAJ=${K8S_VERSION%%.*}; MIN=$(echo "$K8S_VERSION" | cut -d. -f2)
LDX=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDX="$LDX -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=$MAJ -X $p.gitMinor=$MIN -X $p.gitTreeState=clean"
done
# shellcheck disable=SC2086
go get $PKGSV
# shellcheck disable=SC2086
go build -ldflags="-s -w $LDX" -o "$BIN/" $PKGS

log "building kwok $KWOK_VERSION"
GOBIN=$BIN go install -ldflags="-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"

echo "$STAMP" > "$BIN/.stamp"
log "done: $(ls "$BIN" | tr '\n' ' ')"

#!/usr/bin/env bash
# Builds and installs what the real one-node Kubernetes (start.sh) needs, from Debian apt and the Go module proxy
# only (no Docker, no registry). Cached: a second run returns in about a second.
#   control plane  etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl: ../control-plane/setup.sh
#                  (shared with the kwok e2e plane, $K8S_CP_ROOT/bin, default ~/.cache/tbmq-k8s)
#   node           kubelet, kube-proxy (k8s $K8S_VERSION), CoreDNS, cricleanup -> $REAL_NODE_ROOT/bin
#   apt            containerd runc containernetworking-plugins iptables conntrack nftables umoci busybox-static
#                  socat redis-tools gcc libc6-dev openssl curl (installed only when missing)
#   images         OCI archives in $REAL_NODE_ROOT/images/out: pause, coredns, busybox, redis (uid 999)
# Cold on 2 cores: about 15 minutes when the control plane is not built yet, a few when it is (same Go build cache).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=${REAL_NODE_ROOT:-$HOME/.cache/tbmq-real-node}
export K8S_CP_ROOT=${K8S_CP_ROOT:-$HOME/.cache/tbmq-k8s}
export K8S_VERSION=${K8S_VERSION:-1.33.13}
COREDNS_VERSION=${COREDNS_VERSION:-v1.12.2}
BIN=$ROOT/bin
IMAGES=$ROOT/images
export PATH="$PATH:/usr/local/go/bin"
T0=$(date +%s)
log() { echo "[real-node setup +$(( $(date +%s) - T0 ))s] $*"; }

[ "$(id -u)" -eq 0 ] || { echo "error: the real node needs root (containerd, runc, iptables, mounts)" >&2; exit 1; }

# ------------------------------------------------------------------ apt packages (only the missing ones)
APT_PKGS=(containerd runc containernetworking-plugins iptables conntrack nftables umoci socat redis-tools
          gcc libc6-dev openssl curl iproute2 python3)
# dpkg-query exits 1 when any of them is not installed: that is the case this looks for, not an error
installed=" $( { dpkg-query -W -f='${Package}=${Status}\n' "${APT_PKGS[@]}" 2>/dev/null || true; } \
  | sed -n 's/=install ok installed$//p' | tr '\n' ' ') "
missing=()
for p in "${APT_PKGS[@]}"; do [[ "$installed" == *" $p "* ]] || missing+=("$p"); done
# a static busybox goes into the images; busybox-static replaces a dynamic busybox, so only when there is none
if ! { [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; }; then missing+=(busybox-static); fi
mkdir -p "$ROOT"
if [ ${#missing[@]} -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends "${missing[@]}" >"$ROOT/apt.log" 2>&1 \
    || { apt-get update >>"$ROOT/apt.log" 2>&1
         apt-get install -y --no-install-recommends "${missing[@]}" >>"$ROOT/apt.log" 2>&1; } \
    || { echo "error: apt-get install ${missing[*]} failed (see $ROOT/apt.log)" >&2; exit 1; }
fi

# ------------------------------------------------------------------ control plane: the kwok plane's build, shared
"$HERE/../control-plane/setup.sh"
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  [ -x "$K8S_CP_ROOT/bin/$b" ] || { echo "error: $K8S_CP_ROOT/bin/$b missing after ../control-plane/setup.sh" >&2; exit 1; }
done

# ------------------------------------------------------------------ node binaries
# Same flags and go.mod recipe as ../control-plane/setup.sh and the default GOCACHE/GOMODCACHE, so the packages
# kubelet and kube-proxy share with the control plane come from the Go build cache instead of being compiled again.
export GOFLAGS="-trimpath -buildvcs=false" CGO_ENABLED=0
mkdir -p "$BIN" "$ROOT/build"
if [ "$(cat "$BIN/.k8s-stamp" 2>/dev/null)" != "$K8S_VERSION" ] || [ ! -x "$BIN/kubelet" ] || [ ! -x "$BIN/kube-proxy" ]; then
  command -v go >/dev/null || { echo "error: Go is needed (/usr/local/go/bin or PATH)" >&2; exit 1; }
  log "building kubelet, kube-proxy $K8S_VERSION"
  d=$ROOT/build/k8snode; rm -rf "$d"; mkdir -p "$d"; cd "$d"
  STAGING_VERSION=v0.${K8S_VERSION#1.}
  KMOD=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
  {
    echo "module local/k8snodebuild"; echo
    grep -m1 '^go ' "$KMOD"
    grep '^godebug' "$KMOD" || true
    echo; echo "require k8s.io/kubernetes v$K8S_VERSION"; echo
    echo "replace ("
    for m in $(grep -E '^\s+k8s.io/[^ ]+ => ./staging/' "$KMOD" | awk '{print $1}'); do
      if (cd / && GOFLAGS= go list -m -json "$m@$STAGING_VERSION" >/dev/null 2>&1); then
        echo "	$m => $m $STAGING_VERSION"
      else # not published (sample modules); never imported by kubelet or kube-proxy
        mkdir -p "stub/$m"; echo "module $m" > "stub/$m/go.mod"; echo "	$m => ./stub/$m"
      fi
    done
    echo ")"
  } > go.mod
  MAJ=${K8S_VERSION%%.*}; MIN=$(echo "$K8S_VERSION" | cut -d. -f2)
  LDX=""
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    LDX="$LDX -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=$MAJ -X $p.gitMinor=$MIN -X $p.gitTreeState=clean"
  done
  go get "k8s.io/kubernetes/cmd/kubelet@v$K8S_VERSION" "k8s.io/kubernetes/cmd/kube-proxy@v$K8S_VERSION"
  go build -ldflags="-s -w $LDX" -o "$BIN/" k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy
  echo "$K8S_VERSION" > "$BIN/.k8s-stamp"
fi
if [ "$(cat "$BIN/.coredns-stamp" 2>/dev/null)" != "$COREDNS_VERSION" ] || [ ! -x "$BIN/coredns" ]; then
  log "building CoreDNS $COREDNS_VERSION"
  GOBIN=$BIN go install -ldflags="-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
  echo "$COREDNS_VERSION" > "$BIN/.coredns-stamp"
fi
CRIC_STAMP=$(cat "$HERE"/cricleanup/go.mod "$HERE"/cricleanup/go.sum "$HERE"/cricleanup/main.go | sha256sum | cut -c1-16)
if [ "$(cat "$BIN/.cricleanup-stamp" 2>/dev/null)" != "$CRIC_STAMP" ] || [ ! -x "$BIN/cricleanup" ]; then
  log "building cricleanup (CRI client used by stop.sh)"
  (cd "$HERE/cricleanup" && go build -ldflags="-s -w" -o "$BIN/cricleanup" .)
  echo "$CRIC_STAMP" > "$BIN/.cricleanup-stamp"
fi

# ------------------------------------------------------------------ images (umoci, OCI archives)
REDIS_BIN=/usr/bin/redis-check-rdb      # redis-tools' binary; it is the server when called as redis-server
REDIS_TAG=$(dpkg-query -W -f='${Version}' redis-tools | sed 's/^[0-9]*://; s/[-+~].*//')
BUSYBOX_TAG=$(/bin/busybox 2>&1 | sed -n '1s/^BusyBox v\([0-9.]*\).*/\1/p')   # sed reads all: no SIGPIPE
COREDNS_TAG=${COREDNS_VERSION#v}
IMG_STAMP=$( { cat "$HERE/setup.sh" "$HERE/config/pause.c"; stat -L -c '%n %s %Y' "$BIN/coredns" "$REDIS_BIN" /usr/bin/redis-cli /bin/busybox; } | sha256sum | cut -c1-16)
if [ "$(cat "$IMAGES/.stamp" 2>/dev/null)" != "$IMG_STAMP" ]; then
  log "building images pause:3.10 coredns:$COREDNS_TAG busybox:$BUSYBOX_TAG redis:$REDIS_TAG"
  rm -rf "$IMAGES"; mkdir -p "$IMAGES/out" "$IMAGES/work"; cd "$IMAGES"
  OUT=$IMAGES/out
  mkimage() { # name tag user populate-fn [umoci config args...]
    local name=$1 tag=$2 user=$3 fn=$4; shift 4
    local lay=work/$name-layout bun=work/$name-bundle
    umoci init --layout "$lay"
    umoci new --image "$lay:$tag"
    umoci unpack --image "$lay:$tag" "$bun" >/dev/null
    "$fn" "$bun/rootfs"
    umoci repack --image "$lay:$tag" "$bun"
    umoci config --image "$lay:$tag" --os linux --architecture amd64 --config.user "$user" "$@"
    umoci gc --layout "$lay"
    # index.json names the manifest by its tag only: `ctr images import --base-name localhost/NAME` -> localhost/NAME:TAG
    (cd "$lay" && tar -cf "$OUT/$name-$tag.oci.tar" .)
  }
  gcc -Os -static -o work/pause "$HERE/config/pause.c"   # the sandbox: sleeps as PID 1, reaps children
  pop_pause() { install -m755 "$IMAGES/work/pause" "$1/pause"; }
  pop_coredns() {
    install -m755 "$BIN/coredns" "$1/coredns"
    mkdir -p "$1/etc"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/:/sbin/nologin\n' > "$1/etc/passwd"
    printf 'root:x:0:\nnonroot:x:65532:\n' > "$1/etc/group"
  }
  pop_busybox() {
    mkdir -p "$1"/{bin,etc,tmp,proc,sys,dev,root}; chmod 1777 "$1/tmp"
    install -m755 /bin/busybox "$1/bin/busybox"
    for a in $(/bin/busybox --list); do [ -e "$1/bin/$a" ] || ln -s busybox "$1/bin/$a"; done
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$1/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' > "$1/etc/group"
  }
  pop_redis() { # Debian's redis 7 + every shared library it links, non-root user redis (999) owning /data
    pop_busybox "$1"
    install -D -m755 "$REDIS_BIN" "$1/usr/bin/redis-server"
    install -D -m755 /usr/bin/redis-cli "$1/usr/bin/redis-cli"
    for lib in $( (ldd "$REDIS_BIN"; ldd /usr/bin/redis-cli) | grep -o '/[^ ]*' | sort -u); do
      install -D -m755 "$(readlink -f "$lib")" "$1$lib"
    done
    printf 'redis:x:999:999:redis:/data:/bin/false\n' >> "$1/etc/passwd"; printf 'redis:x:999:\n' >> "$1/etc/group"
    mkdir -p "$1/data"; chown 999:999 "$1/data"; chmod 750 "$1/data"
  }
  mkimage pause 3.10 65535:65535 pop_pause --config.entrypoint /pause
  mkimage coredns "$COREDNS_TAG" 65532:65532 pop_coredns --config.entrypoint /coredns --config.exposedports 53/udp \
    --config.exposedports 53/tcp
  mkimage busybox "$BUSYBOX_TAG" 0:0 pop_busybox --config.cmd /bin/sh --config.env PATH=/bin
  # numeric user: the kubelet can verify runAsNonRoot (restricted Pod Security) against it
  mkimage redis "$REDIS_TAG" 999:999 pop_redis --config.entrypoint /usr/bin/redis-server --config.workingdir /data \
    --config.env PATH=/usr/bin:/bin --config.exposedports 6379/tcp
  rm -rf "$IMAGES/work"
  echo "$IMG_STAMP" > "$IMAGES/.stamp"
  log "images: $(cd "$OUT" && ls | tr '\n' ' ')"
fi
log "ready (control plane $K8S_CP_ROOT/bin, node $BIN, images $IMAGES/out)"

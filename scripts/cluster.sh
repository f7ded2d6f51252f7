#!/usr/bin/env bash
# make cluster-up / cluster-down: a real one-node Kubernetes on this machine (e2e/real-node: kubelet,
# containerd, runc, CNI, CoreDNS; built from the Go module proxy and Debian's packages the first time and
# cached in ~/.cache), with the project's images imported, the TbmqCluster and Strimzi CRDs installed, the
# Strimzi stand-in running (a TEST DOUBLE: Strimzi's own images cannot be pulled here; it runs one real
# single-node Kafka per Kafka resource) and a `dev-users` Secret for config/samples/tbmq-dev.yaml.
# `up` prints `export KUBECONFIG=<path>` as its last line; `make deploy` uses this cluster while it is up
# (unless KUBECONFIG is set). `down` stops exactly what `up` started and restores the host.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
STATE=$REPO/.cluster
VERSION=${VERSION:-0.1.0}
NODE=$REPO/e2e/real-node
ROOT=${REAL_NODE_ROOT:-$HOME/.cache/tbmq-real-node}
KUBECTL=${K8S_CP_ROOT:-$HOME/.cache/tbmq-k8s}/bin/kubectl
log() { echo "[cluster $(date +%T)] $*" >&2; }

down() {
  if [ -f "$STATE/standin.pid" ]; then
    pid=$(cat "$STATE/standin.pid")
    if [ -d "/proc/$pid" ] && grep -q StrimziStandInMain "/proc/$pid/cmdline" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
      [ -d "/proc/$pid" ] && kill -9 "$pid" 2>/dev/null || true
    fi
  fi
  "$NODE/stop.sh" >&2
  # What up added for convenience, only if it added it.
  [ -f "$STATE/created-kubeconfig" ] && [ -L "$HOME/.kube/config" ] && rm -f "$HOME/.kube/config"
  [ -f "$STATE/created-kubectl" ] && [ -L /usr/local/bin/kubectl ] && rm -f /usr/local/bin/kubectl
  rm -rf "$STATE"
  log "stopped; the host is as it was"
}

up() {
  [ "$(id -u)" -eq 0 ] || { echo "error: a real node needs root (mounts, iptables, cgroups)" >&2; exit 1; }
  if [ -f "$STATE/env" ]; then
    if [[ "$(REAL_NODE_ROOT=$ROOT "$NODE/leftovers.sh")" == running* ]]; then
      log "a cluster is up already: make cluster-down first"; grep KUBECONFIG "$STATE/env" | sed 's/^/export /'; exit 0
    fi
    log "the cluster recorded in .cluster is gone (a reboot?): cleaning up after it"
    down
  fi
  if [ ! -f broker/target/quarkus-app/quarkus-run.jar ] || [ ! -f operator/target/quarkus-app/quarkus-run.jar ] \
      || [ ! -f strimzi-standin/target/runtime.classpath ] || [ ! -d e2e/target/strimzi-crds ]; then
    log "building the project (once)"
    ./mvnw -B -q --no-transfer-progress install -DskipTests >&2
  fi
  log "setting up the node (cached after the first time)"
  "$NODE/setup.sh" >&2
  log "building the images"
  OUT=target/images/local WORK=target/images/local-work REGISTRY=localhost VERSION=$VERSION scripts/images.sh >&2
  kafka=$("$NODE/kafka-image.sh" local-stack/target/classes/io/tbmq/localstack/kafka-server.classpath)
  mkdir -p "$STATE"
  log "starting the node"
  export_line=$("$NODE/start.sh" "target/images/local/tbmq-broker-$VERSION.oci.tar" \
    "target/images/local/tbmq-operator-$VERSION.oci.tar" "$kafka" | tail -n1)
  kubeconfig=${export_line#export KUBECONFIG=}
  export KUBECONFIG=$kubeconfig
  "$KUBECTL" apply --server-side -f crds/ >&2
  for crd in e2e/target/strimzi-crds/*.yaml; do "$KUBECTL" apply --server-side -f "$crd" >&2; done
  # kubectl wait fails at once, instead of waiting, on a CRD the API server has not given a status yet
  for attempt in $(seq 30); do
    "$KUBECTL" wait --for condition=established --timeout=60s crd --all >&2 && break
    [ "$attempt" -lt 30 ] || { log "the CRDs did not become established"; exit 1; }
    sleep 1
  done
  kafka_tag=$(basename "$kafka" .oci.tar); kafka_tag=${kafka_tag#tbmq-kafka-}
  nohup java -cp "strimzi-standin/target/classes:$(cat strimzi-standin/target/runtime.classpath)" io.tbmq.standin.StrimziStandInMain \
    --kubeconfig "$kubeconfig" --kafka-image "localhost/tbmq-kafka:$kafka_tag" > "$STATE/standin.log" 2>&1 &
  echo $! > "$STATE/standin.pid"
  # The dev sample's users: one user, a generated password (kept in .cluster/dev-password).
  password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  echo "$password" > "$STATE/dev-password"
  hash=$(echo "$password" | java -jar broker/target/quarkus-app/quarkus-run.jar hash-password 2>/dev/null | tail -n1)
  printf 'users:\n  - username: dev\n    password: "%s"\n    publish: ["#"]\n    subscribe: ["#"]\n' "$hash" > "$STATE/credentials.yaml"
  "$KUBECTL" create secret generic dev-users --from-file=credentials.yaml="$STATE/credentials.yaml" --dry-run=client -o yaml \
    | "$KUBECTL" apply --server-side -f - >&2
  redis=$(ls "$ROOT"/images/out/redis-*.oci.tar | head -n1); redis_tag=$(basename "$redis" .oci.tar); redis_tag=${redis_tag#redis-}
  # The images loaded into this cluster are localhost/...: an inherited REGISTRY (a shell's, or an enclosing
  # make's export) must not point make deploy elsewhere; only a make command-line value overrides these.
  cat > "$STATE/env" <<ENV
KUBECONFIG ?= $kubeconfig
REGISTRY = localhost
VERSION = $VERSION
REDIS_IMAGE = localhost/redis:$redis_tag
ENV
  # So that `kubectl` works right away (make cluster-up && make deploy && kubectl apply ...): a kubectl on PATH and
  # the default kubeconfig, each only where the user has none; cluster-down removes what was added.
  if ! command -v kubectl >/dev/null; then
    ln -s "$KUBECTL" /usr/local/bin/kubectl && touch "$STATE/created-kubectl"
  fi
  if [ ! -e "$HOME/.kube/config" ]; then
    mkdir -p "$HOME/.kube" && ln -s "$kubeconfig" "$HOME/.kube/config" && touch "$STATE/created-kubeconfig"
  fi
  log "ready: images localhost/tbmq-broker:$VERSION, localhost/tbmq-operator:$VERSION, localhost/redis:$redis_tag and" \
    "localhost/tbmq-kafka:$kafka_tag; Strimzi stand-in (a test double) running, log .cluster/standin.log"
  log "MQTT user 'dev', password in .cluster/dev-password; next: make deploy && kubectl apply -f config/samples/tbmq-dev.yaml"
  echo "export KUBECONFIG=$kubeconfig"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) echo "usage: cluster.sh up|down" >&2; exit 2 ;;
esac

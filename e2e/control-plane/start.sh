#!/usr/bin/env bash
# The operator e2e suite's Kubernetes (adapted from ../shared/reference/k8s-control-plane; every port configurable
# so parallel runs do not clash). Start a local, kubelet-less Kubernetes control plane on 127.0.0.1:
#   etcd + kube-apiserver (+ kube-controller-manager + kube-scheduler + kwok, unless MINIMAL=1)
# Usage:   ./start.sh            # start everything, wait until usable, print timings
#          ./stop.sh             # stop (kills the PIDs recorded in $RUN/*.pid)
#          export KUBECONFIG=$RUN/admin.kubeconfig
# Env:     ROOT (default ~/.cache/k8s-control-plane), RUN (state dir, default $ROOT/run; wiped on start),
#          API_PORT (6443), ETCD_PORT (2379), AUTHZ (RBAC | AlwaysAllow), MINIMAL (1 = etcd+apiserver only),
#          KWOK_NODES (number of fake nodes, default 1), PKI (cert dir, default $ROOT/pki, created once)
# Pods only *look* Running/Ready (kwok): no containers run, no probes, no pod networking, no volume mounts.
set -euo pipefail

ROOT=${K8S_CP_ROOT:-$HOME/.cache/tbmq-k8s}
BIN=${BIN:-$ROOT/bin}
RUN=${RUN:-$ROOT/run}
API_PORT=${API_PORT:-6443}
ETCD_PORT=${ETCD_PORT:-2379}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-$((ETCD_PORT + 1))}
AUTHZ=${AUTHZ:-RBAC}
MINIMAL=${MINIMAL:-0}
KWOK_NODES=${KWOK_NODES:-1}
SERVICE_CIDR=${SERVICE_CIDR:-10.0.0.0/24}
SERVICE_FIRST_IP=${SERVICE_FIRST_IP:-10.0.0.1}
KCM_PORT=${KCM_PORT:-10257}
SCHEDULER_PORT=${SCHEDULER_PORT:-10259}
KWOK_PORT=${KWOK_PORT:-10247}

now_ms() { date +%s%3N; }
T0=$(now_ms)
log() { echo "[start +$(( $(now_ms) - T0 ))ms] $*"; }

if ls "$RUN"/*.pid >/dev/null 2>&1; then
  echo "$RUN has pid files; run stop.sh first" >&2; exit 1
fi
rm -rf "$RUN"; mkdir -p "$RUN/logs"
PKI=${PKI:-$ROOT/pki}    # generated once, reused by later starts (delete the directory to regenerate)

# ------------------------------------------------------------------ certificates (openssl)
gen_cert() { # name subj ext-file-content
  local n=$1 subj=$2 ext=$3
  openssl genrsa -out "$PKI/$n.key" 2048 2>/dev/null
  openssl req -new -key "$PKI/$n.key" -subj "$subj" -out "$PKI/$n.csr" 2>/dev/null
  printf '%b\n' "$ext" > "$PKI/$n.ext"
  openssl x509 -req -in "$PKI/$n.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$PKI/$n.ext" -out "$PKI/$n.crt" 2>/dev/null
}
if [ ! -s "$PKI/sa.pub" ]; then
mkdir -p "$PKI"
openssl genrsa -out "$PKI/ca.key" 2048 2>/dev/null
openssl req -x509 -new -nodes -key "$PKI/ca.key" -subj "/CN=local-k8s-ca" -days 3650 -sha256 -out "$PKI/ca.crt" 2>/dev/null
gen_cert apiserver "/CN=kube-apiserver" \
  "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:$SERVICE_FIRST_IP"
gen_cert admin "/O=system:masters/CN=kubernetes-admin" \
  "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth"
gen_cert front-proxy-client "/CN=front-proxy-client" \
  "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth"
openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
fi

cat > "$RUN/admin.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $PKI/ca.crt
users:
- name: admin
  user:
    client-certificate: $PKI/admin.crt
    client-key: $PKI/admin.key
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
EOF
KCFG=$RUN/admin.kubeconfig
log "certificates + kubeconfig ready"

start_bg() { # name cmd...
  local n=$1; shift
  "$@" > "$RUN/logs/$n.log" 2>&1 &
  echo $! > "$RUN/$n.pid"
}

# ------------------------------------------------------------------ etcd
ETCD_EXTRA=()
if "$BIN/etcd" --help 2>&1 | grep -q -- '--unsafe-no-fsync'; then ETCD_EXTRA+=(--unsafe-no-fsync); fi
start_bg etcd "$BIN/etcd" --name local --data-dir "$RUN/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "local=http://127.0.0.1:$ETCD_PEER_PORT" \
  --listen-metrics-urls "http://127.0.0.1:$((ETCD_PORT + 2))" \
  "${ETCD_EXTRA[@]}"
until curl -sf "http://127.0.0.1:$ETCD_PORT/health" >/dev/null 2>&1; do sleep 0.1; done
log "etcd healthy ($("$BIN/etcd" --version | head -1))"

# ------------------------------------------------------------------ kube-apiserver
start_bg kube-apiserver "$BIN/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address 127.0.0.1 --secure-port "$API_PORT" \
  --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
  --client-ca-file "$PKI/ca.crt" \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
  --service-cluster-ip-range "$SERVICE_CIDR" \
  --authorization-mode "$AUTHZ" \
  --allow-privileged=true \
  --requestheader-client-ca-file "$PKI/ca.crt" --requestheader-allowed-names front-proxy-client \
  --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
  --requestheader-extra-headers-prefix X-Remote-Extra- \
  --proxy-client-cert-file "$PKI/front-proxy-client.crt" --proxy-client-key-file "$PKI/front-proxy-client.key" \
  --cert-dir "$RUN/apiserver-certs"
CURL=(curl -sf --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key")
until "${CURL[@]}" "https://127.0.0.1:$API_PORT/readyz" >/dev/null 2>&1; do
  kill -0 "$(cat "$RUN/kube-apiserver.pid")" 2>/dev/null || { tail -30 "$RUN/logs/kube-apiserver.log"; exit 1; }
  sleep 0.2
done
until "${CURL[@]}" "https://127.0.0.1:$API_PORT/api/v1/namespaces/default" >/dev/null 2>&1; do sleep 0.2; done
log "kube-apiserver ready (/readyz ok, namespace default exists)"

if [ "$MINIMAL" = 1 ]; then
  log "MINIMAL=1: done. export KUBECONFIG=$KCFG"; exit 0
fi

# ------------------------------------------------------------------ controller-manager, scheduler
start_bg kube-controller-manager "$BIN/kube-controller-manager" \
  --kubeconfig "$KCFG" --authentication-kubeconfig "$KCFG" --authorization-kubeconfig "$KCFG" \
  --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --cert-dir "$RUN/kcm-certs" \
  --leader-elect=false \
  --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
  --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
  --use-service-account-credentials=false \
  --enable-hostpath-provisioner=true \
  --controllers '*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller'
start_bg kube-scheduler "$BIN/kube-scheduler" \
  --kubeconfig "$KCFG" --authentication-kubeconfig "$KCFG" --authorization-kubeconfig "$KCFG" \
  --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --leader-elect=false

# ------------------------------------------------------------------ kwok (fake kubelet for nodes annotated kwok.x-k8s.io/node=fake)
start_bg kwok "$BIN/kwok" \
  --kubeconfig "$KCFG" \
  --manage-all-nodes=false \
  --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --manage-nodes-with-label-selector= \
  --disregard-status-with-annotation-selector=kwok.x-k8s.io/status=custom \
  --disregard-status-with-label-selector= \
  --cidr=10.244.0.0/16 \
  --node-ip=10.240.0.1 \
  --node-lease-duration-seconds=40 \
  --server-address=127.0.0.1:$KWOK_PORT

for i in $(seq 0 $((KWOK_NODES - 1))); do
cat <<EOF | "${CURL[@]}" -X POST -H 'Content-Type: application/yaml' --data-binary @- \
  "https://127.0.0.1:$API_PORT/api/v1/nodes" >/dev/null
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations:
    node.alpha.kubernetes.io/ttl: "0"
    kwok.x-k8s.io/node: fake
  labels:
    kubernetes.io/arch: amd64
    kubernetes.io/hostname: kwok-node-$i
    kubernetes.io/os: linux
    kubernetes.io/role: agent
    node-role.kubernetes.io/agent: ""
    type: kwok
spec: {}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
  nodeInfo: {architecture: amd64, kubeletVersion: fake, kubeProxyVersion: fake, operatingSystem: linux}
  phase: Running
EOF
done

# default StorageClass served by kube-controller-manager's in-tree hostPath provisioner (test only: no kubelet
# mounts anything, PVs are API objects only) -> StatefulSets with volumeClaimTemplates get Bound PVCs
cat <<EOF | "${CURL[@]}" -X POST -H 'Content-Type: application/yaml' --data-binary @- \
  "https://127.0.0.1:$API_PORT/apis/storage.k8s.io/v1/storageclasses" >/dev/null
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
EOF

# wait: all nodes Ready, default ServiceAccount present (created by kcm), scheduler healthy
until "${CURL[@]}" "https://127.0.0.1:$API_PORT/api/v1/nodes" 2>/dev/null | python3 -c '
import json,sys
items=json.load(sys.stdin)["items"]
ok=[n for n in items if any(c["type"]=="Ready" and c["status"]=="True" for c in n.get("status",{}).get("conditions",[]))]
sys.exit(0 if items and len(ok)==len(items) else 1)'; do sleep 0.2; done
log "kwok node(s) Ready"
until "${CURL[@]}" "https://127.0.0.1:$API_PORT/api/v1/namespaces/default/serviceaccounts/default" >/dev/null 2>&1; do sleep 0.2; done
log "default ServiceAccount exists (controller-manager working)"
until curl -skf https://127.0.0.1:$SCHEDULER_PORT/healthz >/dev/null 2>&1; do sleep 0.2; done
until curl -skf https://127.0.0.1:$KCM_PORT/healthz >/dev/null 2>&1; do sleep 0.2; done
log "control plane up. export KUBECONFIG=$KCFG"

#!/usr/bin/env bash
# A real one-node Kubernetes on this machine (real runc containers, pod IPs, probes, logs/exec, ClusterIP Services,
# cluster DNS, hostPath PVs), for the operator's tests that need more than kwok's pretend pods.
#   etcd + kube-apiserver + kube-controller-manager + kube-scheduler   (binaries shared with ../control-plane)
#   containerd + runc + CNI bridge (Debian) + kubelet + kube-proxy (iptables) + CoreDNS
# Usage:  ./setup.sh                       # once; cached
#         ./start.sh [IMAGE.oci.tar | NAME=IMAGE.oci.tar]...   # imports each as localhost/NAME:TAG
#         eval "$(./start.sh ... | tail -1)"      # the last line is `export KUBECONFIG=...`
#         ./stop.sh                        # stops exactly the recorded PIDs and restores the host
# Without NAME=, NAME is the file name minus .oci.tar and a trailing -<version> (tbmq-broker-0.1.0.oci.tar ->
# localhost/tbmq-broker:0.1.0); TAG is the archive's own tag (its index.json ref.name).
# Env: REAL_NODE_ROOT (~/.cache/tbmq-real-node: node binaries, images, containerd store, state), RUN (state dir,
#      $REAL_NODE_ROOT/run, wiped on start), K8S_CP_ROOT (~/.cache/tbmq-k8s), API_PORT (16443), ETCD_PORT (12379,
#      and +1 +2), KCM_PORT (16257), SCHEDULER_PORT (16259), KUBELET_PORT (16250, healthz 16248),
#      PROXY_METRICS_PORT (16249), PROXY_HEALTH_PORT (16256), HOST_IP (the default route's source address),
#      NODE_NAME (realnode), DNS (1 = deploy CoreDNS), START_TIMEOUT (300 s),
#      KEEP_ON_FAILURE (1 = leave a failed start running for inspection; otherwise stop.sh runs).
# Ports stay below 20000, clear of the kwok plane's defaults (6443, 2379-2381, 10247, 10257, 10259) and of the
# 20000-29999 range the project's tests draw free ports from (io.tbmq.localstack.Ports).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
R=${REAL_NODE_ROOT:-$HOME/.cache/tbmq-real-node}
CP_BIN=${K8S_CP_ROOT:-$HOME/.cache/tbmq-k8s}/bin
BIN=$R/bin
RUN=${RUN:-$R/run}
PKI=$R/pki
API_PORT=${API_PORT:-16443}
ETCD_PORT=${ETCD_PORT:-12379}
KCM_PORT=${KCM_PORT:-16257}
SCHEDULER_PORT=${SCHEDULER_PORT:-16259}
KUBELET_PORT=${KUBELET_PORT:-16250}
KUBELET_HEALTH_PORT=${KUBELET_HEALTH_PORT:-16248}
PROXY_METRICS_PORT=${PROXY_METRICS_PORT:-16249}
PROXY_HEALTH_PORT=${PROXY_HEALTH_PORT:-16256}
NODE_NAME=${NODE_NAME:-realnode}
SERVICE_CIDR=10.96.0.0/24
SERVICE_FIRST_IP=10.96.0.1
DNS_IP=10.96.0.10
POD_CIDR=10.244.0.0/24
POD_GATEWAY=10.244.0.1
BRIDGE=tbmqcni0
COREDNS_TAG=1.12.2
if [ -z "${HOST_IP:-}" ]; then
  HOST_IP=$(ip -4 route get 1.1.1.1 2>/dev/null | awk '{for(i=1;i<=NF;i++) if($i=="src") print $(i+1)}')
  [ -n "$HOST_IP" ] || HOST_IP=$(ip -4 -o addr show scope global | awk '{sub("/.*","",$4); print $4; exit}')
fi
[ -n "$HOST_IP" ] || { echo "error: no IPv4 address for the node; set HOST_IP" >&2; exit 1; }
export PATH=$BIN:$CP_BIN:$PATH

now_ms() { date +%s%3N; }
T0=$(now_ms)
log() { echo "[real-node start +$(( $(now_ms) - T0 ))ms] $*"; }

[ "$(id -u)" -eq 0 ] || { echo "error: the real node needs root" >&2; exit 1; }
for b in "$CP_BIN"/{etcd,kube-apiserver,kube-controller-manager,kube-scheduler,kubectl} "$BIN"/{kubelet,kube-proxy,cricleanup} \
         /usr/bin/containerd /usr/bin/ctr /usr/sbin/runc /usr/lib/cni/bridge /usr/sbin/iptables; do
  [ -x "$b" ] || { echo "error: $b missing: run $HERE/setup.sh" >&2; exit 1; }
done
ls "$R"/images/out/pause-*.oci.tar >/dev/null 2>&1 || { echo "error: no images in $R/images/out: run $HERE/setup.sh" >&2; exit 1; }

# image arguments: checked before anything starts
IMPORTS=()
for a in "$@"; do
  if [[ "$a" == *=* ]]; then n=${a%%=*}; f=${a#*=}; else f=$a; n=$(basename "$f" .oci.tar); [[ "$n" =~ ^(.+)-[0-9][^-]*$ ]] && n=${BASH_REMATCH[1]}; fi
  [ -f "$f" ] || { echo "error: image archive $f not found" >&2; exit 1; }
  IMPORTS+=("$n=$(readlink -f "$f")")
done

# A node still up is refused; what a run cut short left (a reboot or a killed session: PID files of processes
# that are gone, mounts, iptables chains) is cleaned up by stop.sh first, as a user would have to.
. "$HERE/leftovers.sh"
case "$(leftovers)" in
  running*) echo "error: a node is up already ($(leftovers | cut -d' ' -f2-)): run $HERE/stop.sh first" >&2; exit 1 ;;
  stale) log "the last run ended without stop.sh (its processes are gone): cleaning up after it"; "$HERE/stop.sh" ;;
esac
# never rm -rf across a mount a killed kubelet/containerd left behind (a bind mount may point into the host)
if awk -v r="$R" '$2 == r || index($2, r "/") == 1 {f=1} END {exit !f}' /proc/mounts; then
  echo "error: mounts left under $R (a run not stopped?): run $HERE/stop.sh first" >&2; exit 1
fi
rm -rf "$RUN" "$R/kubelet" "$R/pod-logs" "$R/cni" "$R/kubelet-plugins"
mkdir -p "$RUN/logs"

# ------------------------------------------------------------------ host state stop.sh restores
# sysctls the kubelet (vm.overcommit_memory, kernel.panic*, kernel.keys.*), the CNI bridge (ip_forward) and
# kube-proxy (conntrack, route_localnet) may change; only the keys that exist now
for k in vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys \
         kernel.keys.root_maxbytes net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv6.conf.all.forwarding \
         net.ipv4.conf.all.route_localnet net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables \
         net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_tcp_timeout_established \
         net.netfilter.nf_conntrack_tcp_timeout_close_wait net.netfilter.nf_conntrack_tcp_be_liberal \
         net.netfilter.nf_conntrack_udp_timeout net.netfilter.nf_conntrack_udp_timeout_stream; do
  if v=$(sysctl -n "$k" 2>/dev/null); then echo "$k=$v"; fi
done > "$RUN/sysctl-before.txt"
# host paths the kubelet, libcni and the hostPath provisioner use whatever the configuration: stop.sh removes
# those that did not exist before; likewise CNI-* iptables chains and nftables tables that appear
for p in /var/log/containers /var/lib/cni /tmp/hostpath_pv /var/lib/kubelet /run/containerd /run/mount; do
  [ -e "$p" ] && echo "$p"
done > "$RUN/paths-before.txt" || true
chains=$(for t in filter nat mangle raw; do iptables -t $t -S 2>/dev/null || true; done)
if grep -q -- '-N CNI-' <<<"$chains"; then touch "$RUN/cni-chains-before"; fi
{ command -v nft >/dev/null && nft list tables 2>/dev/null || true; } > "$RUN/nft-tables-before.txt"

START_OK=0
on_exit() {
  [ "$START_OK" = 1 ] && return
  echo "[real-node start] failed; logs in $RUN/logs" >&2
  if [ "${KEEP_ON_FAILURE:-0}" != 1 ]; then "$HERE/stop.sh" >&2 || true; fi
}
trap on_exit EXIT

# ------------------------------------------------------------------ PKI (openssl), created once per host address
gen_cert() { # name subj ext
  local n=$1 subj=$2 ext=$3
  openssl genrsa -out "$PKI/$n.key" 2048 2>/dev/null
  openssl req -new -key "$PKI/$n.key" -subj "$subj" -out "$PKI/$n.csr" 2>/dev/null
  printf '%b\n' "$ext" > "$PKI/$n.ext"
  openssl x509 -req -in "$PKI/$n.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$PKI/$n.ext" -out "$PKI/$n.crt" 2>/dev/null
}
CLIENT="basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth"
PKI_ID="$HOST_IP $NODE_NAME"
if [ ! -s "$PKI/sa.pub" ] || [ "$(cat "$PKI/id" 2>/dev/null)" != "$PKI_ID" ]; then
  rm -rf "$PKI"; mkdir -p "$PKI"; chmod 700 "$PKI"
  openssl genrsa -out "$PKI/ca.key" 2048 2>/dev/null
  openssl req -x509 -new -nodes -key "$PKI/ca.key" -subj "/CN=tbmq-realnode-ca" -days 3650 -sha256 -out "$PKI/ca.crt" 2>/dev/null
  # the apiserver listens on 0.0.0.0 and advertises the host address: pods reach it through 10.96.0.1
  gen_cert apiserver "/CN=kube-apiserver" \
    "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:$SERVICE_FIRST_IP,IP:$HOST_IP"
  gen_cert admin "/O=system:masters/CN=kubernetes-admin" "$CLIENT"
  gen_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$CLIENT"
  gen_cert front-proxy-client "/CN=front-proxy-client" "$CLIENT"
  gen_cert node "/O=system:nodes/CN=system:node:$NODE_NAME" "$CLIENT"
  gen_cert kube-proxy "/CN=system:kube-proxy" "$CLIENT"
  openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  echo "$PKI_ID" > "$PKI/id"
fi
kubeconfig() { # file cert-name
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: realnode
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$PKI/ca.crt"}
users:
- name: $2
  user: {client-certificate: "$PKI/$2.crt", client-key: "$PKI/$2.key"}
contexts:
- name: realnode
  context: {cluster: realnode, user: $2}
current-context: realnode
EOF
}
kubeconfig "$RUN/admin.kubeconfig" admin
kubeconfig "$RUN/kubelet.kubeconfig" node
kubeconfig "$RUN/kube-proxy.kubeconfig" kube-proxy
KCFG=$RUN/admin.kubeconfig
KC=(kubectl --kubeconfig "$KCFG")
log "pki + kubeconfigs ready (node $NODE_NAME, host ip $HOST_IP)"

# start_bg NAME CMD...: own session (a caller's Ctrl-C or process-group kill does not reach it), PID in $RUN/NAME.pid
# (the process itself: bash writes its own PID, then execs), its executable in $RUN/NAME.exe for stop.sh to check
start_bg() {
  local n=$1; shift
  readlink -f "$(command -v "$1")" > "$RUN/$n.exe"
  setsid bash -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$RUN/$n.pid" "$@" \
    > "$RUN/logs/$n.log" 2>&1 < /dev/null &
  until [ -s "$RUN/$n.pid" ]; do sleep 0.02; done
}
alive() { kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }
DEADLINE=$(( $(now_ms) + ${START_TIMEOUT:-300} * 1000 ))
in_time() { [ "$(now_ms)" -lt "$DEADLINE" ] || { echo "error: not up within ${START_TIMEOUT:-300}s (START_TIMEOUT)" >&2; exit 1; }; }
wait_for() { # name cmd...   (fails if the process died)
  local n=$1; shift
  until "$@" >/dev/null 2>&1; do
    alive "$n" || { echo "$n died:" >&2; tail -30 "$RUN/logs/$n.log" >&2; exit 1; }
    in_time; sleep 0.1
  done
}

# ------------------------------------------------------------------ etcd
start_bg etcd "$CP_BIN/etcd" --name realnode --data-dir "$RUN/etcd" --unsafe-no-fsync \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT+1))" --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT+1))" \
  --initial-cluster "realnode=http://127.0.0.1:$((ETCD_PORT+1))" --listen-metrics-urls "http://127.0.0.1:$((ETCD_PORT+2))"
wait_for etcd curl -sf "http://127.0.0.1:$ETCD_PORT/health"
log "etcd healthy"

# ------------------------------------------------------------------ kube-apiserver
start_bg kube-apiserver "$CP_BIN/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address 0.0.0.0 --advertise-address "$HOST_IP" --secure-port "$API_PORT" \
  --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" --client-ca-file "$PKI/ca.crt" \
  --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types InternalIP \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
  --service-cluster-ip-range "$SERVICE_CIDR" --authorization-mode Node,RBAC --allow-privileged=true \
  --enable-admission-plugins NodeRestriction \
  --requestheader-client-ca-file "$PKI/ca.crt" --requestheader-allowed-names front-proxy-client \
  --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
  --requestheader-extra-headers-prefix X-Remote-Extra- \
  --proxy-client-cert-file "$PKI/front-proxy-client.crt" --proxy-client-key-file "$PKI/front-proxy-client.key" \
  --cert-dir "$RUN/apiserver-certs"
CURL=(curl -sf --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key")
wait_for kube-apiserver "${CURL[@]}" "https://127.0.0.1:$API_PORT/readyz"
wait_for kube-apiserver "${CURL[@]}" "https://127.0.0.1:$API_PORT/api/v1/namespaces/default"
log "kube-apiserver ready"

start_bg kube-controller-manager "$CP_BIN/kube-controller-manager" \
  --kubeconfig "$KCFG" --authentication-kubeconfig "$KCFG" --authorization-kubeconfig "$KCFG" \
  --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --cert-dir "$RUN/kcm-certs" --leader-elect=false \
  --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
  --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
  --use-service-account-credentials=true --enable-hostpath-provisioner=true \
  --controllers '*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller'
start_bg kube-scheduler "$CP_BIN/kube-scheduler" \
  --kubeconfig "$KCFG" --authentication-kubeconfig "$KCFG" --authorization-kubeconfig "$KCFG" \
  --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --leader-elect=false

# ------------------------------------------------------------------ containerd (own root, state and socket under $R)
TN=$(now_ms)
mkdir -p "$R/containerd" "$R/cni/ipam" "$R/cni/net.d" "$R/pod-logs"
subst() { sed -e "s#@ROOT@#$R#g" -e "s#@BRIDGE@#$BRIDGE#g" -e "s#@POD_CIDR@#$POD_CIDR#g" -e "s#@POD_GATEWAY@#$POD_GATEWAY#g" \
              -e "s#@DNS_IP@#$DNS_IP#g" -e "s#@COREDNS_TAG@#$COREDNS_TAG#g" "$1"; }
subst "$HERE/config/containerd-config.toml" > "$R/containerd/config.toml"
subst "$HERE/config/10-rnbridge.conflist" > "$R/cni/net.d/10-tbmqbridge.conflist"
start_bg containerd /usr/bin/containerd --config "$R/containerd/config.toml"
CTR=(ctr --address "$R/containerd/containerd.sock" -n k8s.io)
wait_for containerd "${CTR[@]}" version
import() { REAL_NODE_ROOT=$R "$HERE/load-image.sh" "$2" "$1" >/dev/null; }   # NAME FILE -> localhost/NAME:TAG
for t in "$R"/images/out/*.oci.tar; do n=$(basename "$t" .oci.tar); import "${n%-*}" "$t"; done
for i in "${IMPORTS[@]}"; do import "${i%%=*}" "${i#*=}"; done
log "containerd up, images: $("${CTR[@]}" images ls -q | grep -v '^sha256' | tr '\n' ' ')"

wait_for kube-scheduler curl -skf "https://127.0.0.1:$SCHEDULER_PORT/healthz"
wait_for kube-controller-manager curl -skf "https://127.0.0.1:$KCM_PORT/healthz"
log "controller-manager + scheduler healthy"

# ------------------------------------------------------------------ kubelet
cat > "$RUN/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$R/containerd/containerd.sock
cgroupDriver: cgroupfs            # PID 1 is not systemd; cgroup v1 (hybrid) hierarchy
failCgroupV1: false               # cgroup v1 is in maintenance since 1.31, still allowed in 1.33
failSwapOn: false
address: 0.0.0.0                  # the apiserver reaches it at the node InternalIP for logs/exec/port-forward
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTH_PORT
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$PKI/ca.crt"}
authorization: {mode: Webhook}
clusterDomain: cluster.local
clusterDNS: [$DNS_IP]
resolvConf: /etc/resolv.conf
serializeImagePulls: false
protectKernelDefaults: false
evictionHard: {memory.available: "100Mi", nodefs.available: "2%", imagefs.available: "2%", nodefs.inodesFree: "2%"}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
maxPods: 110
makeIPTablesUtilChains: false     # no KUBE-FIREWALL / canary chains from the kubelet
podLogsDir: $R/pod-logs           # default /var/log/pods
volumePluginDir: $R/kubelet-plugins/volume/exec   # default /usr/libexec/kubernetes/...
EOF
start_bg kubelet "$BIN/kubelet" --config "$RUN/kubelet-config.yaml" --kubeconfig "$RUN/kubelet.kubeconfig" \
  --root-dir "$R/kubelet" --cert-dir "$R/kubelet/pki" --hostname-override "$NODE_NAME" --node-ip "$HOST_IP" --v=2
until [ "$("${KC[@]}" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; do
  alive kubelet || { echo "kubelet died:" >&2; tail -40 "$RUN/logs/kubelet.log" >&2; exit 1; }
  in_time; sleep 0.2
done
log "node $NODE_NAME Ready (containerd + kubelet took $(( $(now_ms) - TN ))ms)"

# ------------------------------------------------------------------ service CIDR guard
# A connection to a ClusterIP that kube-proxy's rules neither DNAT nor reject (seen while it rewrites them as
# endpoints change) leaves by the default route. This VM's egress proxy accepts any TCP connection there and
# answers "HTTP/1.1 400 Bad Request"; a Kafka client reads "HTTP" as a 1.2 GB frame size and its JVM runs out of
# heap. Refused here instead, as kube-proxy refuses a Service without endpoints. Packets kube-proxy DNATs carry a
# pod address by the time the filter table sees them, so only strays match. stop.sh removes the TBMQ-* chain.
iptables -N TBMQ-SERVICE-GUARD 2>/dev/null || iptables -F TBMQ-SERVICE-GUARD
iptables -A TBMQ-SERVICE-GUARD -d "$SERVICE_CIDR" -p tcp -j REJECT --reject-with tcp-reset
iptables -A TBMQ-SERVICE-GUARD -d "$SERVICE_CIDR" -j REJECT --reject-with icmp-port-unreachable
for c in FORWARD OUTPUT; do
  iptables -C $c -j TBMQ-SERVICE-GUARD 2>/dev/null || iptables -I $c 1 -j TBMQ-SERVICE-GUARD
done

# ------------------------------------------------------------------ kube-proxy (iptables)
cat > "$RUN/kube-proxy-config.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$RUN/kube-proxy.kubeconfig"}
mode: iptables
clusterCIDR: $POD_CIDR
hostnameOverride: $NODE_NAME
healthzBindAddress: 127.0.0.1:$PROXY_HEALTH_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
nodePortAddresses: ["primary"]    # no localhost NodePorts -> route_localnet stays 0
oomScoreAdj: 0                    # no CAP_SYS_RESOURCE here: cannot go below 0
conntrack:                        # leave the host's conntrack settings alone
  maxPerCore: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
start_bg kube-proxy "$BIN/kube-proxy" --config "$RUN/kube-proxy-config.yaml" --v=2
wait_for kube-proxy curl -sf "http://127.0.0.1:$PROXY_HEALTH_PORT/healthz"
log "kube-proxy healthy"

# default StorageClass: kube-controller-manager's hostPath provisioner (under /tmp/hostpath_pv), really mounted
cat <<EOF | "${KC[@]}" apply -f - >/dev/null
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
EOF
if [ "${DNS:-1}" = 1 ]; then
  subst "$HERE/manifests/coredns.yaml" | "${KC[@]}" apply -f - >/dev/null
  until "${KC[@]}" -n kube-system wait --for=condition=Available deploy/coredns --timeout=20s >/dev/null 2>&1; do
    alive kubelet || { echo "kubelet died" >&2; exit 1; }
    in_time; sleep 0.5
  done
  log "CoreDNS available at $DNS_IP"
fi
until "${KC[@]}" get sa default >/dev/null 2>&1; do in_time; sleep 0.2; done
START_OK=1
log "cluster up (API https://127.0.0.1:$API_PORT, node $NODE_NAME $HOST_IP, pods $POD_CIDR, services $SERVICE_CIDR)"
echo "export KUBECONFIG=$KCFG"

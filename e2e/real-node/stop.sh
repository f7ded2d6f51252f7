#!/usr/bin/env bash
# Stop what start.sh started and put the host back. Idempotent: safe to run again, or after a failed start.
#  1. kube-proxy (recorded PID), then `kube-proxy --cleanup` (its iptables/nftables rules)
#  2. kubelet; every pod sandbox removed through the CRI (cricleanup rmp: stops the containers, CNI DEL frees
#     the IP, veth and masquerade rules); shims or containers still alive after that are killed by the PIDs our
#     containerd recorded under $REAL_NODE_ROOT/containerd/state (never by name)
#  3. containerd, controller-manager, scheduler, apiserver, etcd (recorded PIDs, each checked against the
#     executable start.sh recorded, so a reused PID is never killed)
#  4. host: unmounts everything under $REAL_NODE_ROOT, drops KUBE-*, TBMQ-* (and new CNI-*) iptables chains, new empty
#     nftables tables, the pod bridge, empty kubepods cgroups, our hostPath PV dirs, host paths that did not exist
#     before, and restores the sysctls saved at start.
# Keeps $RUN/logs and the containerd image store (next start is faster).
R=${REAL_NODE_ROOT:-$HOME/.cache/tbmq-real-node}
RUN=${RUN:-$R/run}
BRIDGE=tbmqcni0
T0=$(date +%s%3N); log() { echo "[real-node stop +$(( $(date +%s%3N) - T0 ))ms] $*"; }
[ -d "$RUN" ] || { log "nothing to stop ($RUN absent)"; exit 0; }

# ours NAME PID: is PID still the process start.sh recorded?
. "$(dirname "${BASH_SOURCE[0]}")/leftovers.sh"
stop_pids() { # name...: SIGTERM to each recorded PID that is still ours, wait up to $WAIT s, then SIGKILL
  local n pid names=() pids=() i
  for n in "$@"; do
    [ -f "$RUN/$n.pid" ] || continue
    pid=$(cat "$RUN/$n.pid")
    if [ -n "$pid" ] && ours "$n" "$pid"; then kill "$pid" 2>/dev/null; names+=("$n"); pids+=("$pid"); fi
  done
  for _ in $(seq 1 $((${WAIT:-10} * 20))); do
    local up=0
    for i in "${!pids[@]}"; do kill -0 "${pids[$i]}" 2>/dev/null && { up=1; break; }; done
    [ "$up" = 1 ] || break
    sleep 0.05
  done
  for i in "${!pids[@]}"; do
    n=${names[$i]}; pid=${pids[$i]}
    if kill -0 "$pid" 2>/dev/null && ours "$n" "$pid"; then
      kill -9 "$pid" 2>/dev/null; log "killed $n ($pid) with SIGKILL"
      while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    else
      log "stopped $n ($pid)"
    fi
  done
  for n in "$@"; do rm -f "$RUN/$n.pid"; done
}
running() { [ -f "$RUN/$1.pid" ] && ours "$1" "$(cat "$RUN/$1.pid")"; }

# ------------------------------------------------------------------ node
# hostPath PVs (kube-controller-manager's provisioner writes /tmp/hostpath_pv/<uuid>, a path the kwok plane's
# tests use too): remember ours while the API server still answers, removed below
KUBECTL=${K8S_CP_ROOT:-$HOME/.cache/tbmq-k8s}/bin/kubectl
if running kube-apiserver && [ -x "$KUBECTL" ]; then
  timeout 20 "$KUBECTL" --kubeconfig "$RUN/admin.kubeconfig" get pv \
    -o jsonpath='{range .items[*]}{.spec.hostPath.path}{"\n"}{end}' 2>/dev/null | grep '^/tmp/hostpath_pv/' >>"$RUN/hostpath-pvs.txt"
fi
stop_pids kube-proxy
if [ -f "$RUN/kube-proxy-config.yaml" ] && [ -x "$R/bin/kube-proxy" ]; then
  "$R/bin/kube-proxy" --cleanup >"$RUN/logs/kube-proxy-cleanup.log" 2>&1 && log "kube-proxy --cleanup done"
fi
stop_pids kubelet
SOCK=$R/containerd/containerd.sock
if running containerd; then
  timeout 120 "$R/bin/cricleanup" -endpoint "unix://$SOCK" rmp >"$RUN/logs/cricleanup.log" 2>&1
  log "pod sandboxes removed through the CRI ($(grep -c '^removed' "$RUN/logs/cricleanup.log") pods)"
fi
# fallback for what the CRI could not remove: containers' init processes and their shims, by the PIDs our
# containerd wrote in its own state dir (init.pid, shim.pid), each confirmed to belong to that task
TASKS=$R/containerd/state/io.containerd.runtime.v2.task
if [ -d "$TASKS" ]; then
  for d in "$TASKS"/*/*/; do
    [ -d "$d" ] || continue
    for pf in init.pid shim.pid; do
      [ -s "$d/$pf" ] || continue
      pid=$(cat "$d/$pf")
      [ -d "/proc/$pid" ] || continue
      if [ "$pf" = shim.pid ] && ! tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "-address $SOCK"; then continue; fi
      if [ "$pf" = init.pid ] && ! grep -q "$(basename "$d")" "/proc/$pid/cgroup" 2>/dev/null; then continue; fi
      kill -9 "$pid" 2>/dev/null && log "killed leftover $(basename "$d") ${pf%.pid} ($pid)"
    done
  done
fi
WAIT=15 stop_pids containerd
stop_pids kube-scheduler kube-controller-manager kube-apiserver   # etcd last: the others shut down against it
stop_pids etcd

# ------------------------------------------------------------------ host clean-up
# mounts a killed kubelet/containerd leave: pod volumes (tmpfs), overlay rootfs, netns and shm under $R
awk '{print $2}' /proc/mounts | grep -E "^$R/" | sort -r | while read -r m; do
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
done
left=$(awk '{print $2}' /proc/mounts | grep -cE "^$R/")
[ "$left" -eq 0 ] || log "WARNING: $left mounts left under $R"

# iptables (both families, all tables): jumps into KUBE-* and TBMQ-* chains, then the chains; CNI-* likewise unless CNI-*
# chains existed before start (CNI DEL removes per-pod chains; portmap's CNI-HOSTPORT-* stay otherwise)
PREFIX='(KUBE|TBMQ)-'
[ -f "$RUN/cni-chains-before" ] || PREFIX='(KUBE|CNI|TBMQ)-'
for ipt in iptables ip6tables; do
  command -v $ipt >/dev/null || continue
  for t in filter nat mangle raw; do
    rules=$($ipt -t $t -S 2>/dev/null) || continue
    grep -E "^-A [A-Z_-]+ .*-j $PREFIX" <<<"$rules" | grep -vE "^-A $PREFIX" | sed 's/^-A /-D /' |
      while read -r r; do eval "$ipt -t $t $r" 2>/dev/null; done
    chains=$($ipt -t $t -S 2>/dev/null | awk -v p="^-N $PREFIX" '$0 ~ p {print $2}')
    for c in $chains; do $ipt -t $t -F "$c" 2>/dev/null; done
    for c in $chains; do $ipt -t $t -X "$c" 2>/dev/null; done
  done
done
# nftables tables that appeared during the run (iptables-nft's nat/filter/...): deleted when nothing is left in
# them but base chains with policy accept
if command -v nft >/dev/null; then
  nft list tables 2>/dev/null | while read -r _ fam name; do
    grep -qxF "table $fam $name" "$RUN/nft-tables-before.txt" 2>/dev/null && continue
    body=$(nft list table "$fam" "$name" 2>/dev/null) || continue
    if ! grep -vE '^\s*(#.*|table .*\{|chain [^ ]+ \{|type .* policy accept;|\}|)\s*$' <<<"$body" | grep -q .; then
      nft delete table "$fam" "$name" 2>/dev/null && log "deleted empty nftables table $fam $name"
    fi
  done
fi
ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE" && log "deleted bridge $BRIDGE"
for h in /sys/fs/cgroup/*/; do [ -d "$h/kubepods" ] && find "$h/kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null; done
if [ -s "$RUN/hostpath-pvs.txt" ]; then
  while read -r d; do [[ "$d" == /tmp/hostpath_pv/?* && "$d" != *..* ]] && rm -rf "$d"; done < "$RUN/hostpath-pvs.txt"
fi
rm -f "$RUN/hostpath-pvs.txt"
for p in /var/log/containers /var/lib/cni /var/lib/kubelet /run/containerd /run/mount; do
  [ -e "$p" ] && ! grep -qxF "$p" "$RUN/paths-before.txt" 2>/dev/null && [ -f "$RUN/paths-before.txt" ] && rm -rf "$p"
done
if [ -d /tmp/hostpath_pv ] && [ -f "$RUN/paths-before.txt" ] && ! grep -qxF /tmp/hostpath_pv "$RUN/paths-before.txt"; then
  rmdir /tmp/hostpath_pv 2>/dev/null   # only when empty: the kwok plane may be using it
fi
if [ -f "$RUN/sysctl-before.txt" ]; then
  while IFS='=' read -r k v; do
    [ "$(sysctl -n "$k" 2>/dev/null)" = "$v" ] || { sysctl -qw "$k=$v" 2>/dev/null && log "restored $k=$v"; }
  done < "$RUN/sysctl-before.txt"
  rm -f "$RUN/sysctl-before.txt"
fi
log "done"

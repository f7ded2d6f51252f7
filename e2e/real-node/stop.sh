#!/usr/bin/env bash
# Stop what start.sh started and put the host back. Idempotent: safe to run again, or after a failed start.
#  1. kube-proxy (recorded PID), then `kube-proxy --cleanup` (its iptables/nftables rules)
#  2. kubelet; every pod sandbox removed through the CRI (cricleanup rmp: stops the containers, CNI DEL frees
#     the IP, veth and masquerade rules); shims or containers still alive after that are killed by the PIDs our
#     containerd recorded under $REAL_NODE_ROOT/containerd/state (never by name)
#  3. containerd, controller-manager, scheduler, apiserver, etcd (recorded PIDs, each checked against the
#     executable start.sh recorded, so a reused PID is never killed)
#  4. host: unmounts everything under $REAL_NODE_ROOT, drops KUBE-* (and new CNI-*) iptables chains, new empty
#     nftables tables, the pod bridge, empty kubepods cgroups, host paths that did not exist before, and restores
#     the sysctls saved at start.
# Keeps $RUN/logs and the containerd image store (next start is faster).
R=${REAL_NODE_ROOT:-$HOME/.cache/tbmq-real-node}
RUN=${RUN:-$R/run}
BRIDGE=tbmqcni0
T0=$(date +%s%3N); log() { echo "[real-node stop +$(( $(date +%s%3N) - T0 ))ms] $*"; }
[ -d "$RUN" ] || { log "nothing to stop ($RUN absent)"; exit 0; }

# is PID still the process start.sh recorded? (its executable; " (deleted)" when the binary was rebuilt since)
ours() { # name pid
  local exe; exe=$(readlink "/proc/$2/exe" 2>/dev/null) || return 1
  [ "${exe% (deleted)}" = "$(cat "$RUN/$1.exe" 2>/dev/null)" ]
}
stop_pid() { # name [seconds before SIGKILL]
  local n=$1 f=$RUN/$1.pid wait=${2:-10} pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if [ -n "$pid" ] && ours "$n" "$pid"; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 $((wait * 20))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null; log "killed $n ($pid) with SIGKILL"; else log "stopped $n ($pid)"; fi
    while kill -0 "$pid" 2>/dev/null && ours "$n" "$pid"; do sleep 0.05; done
  fi
  rm -f "$f"
}
running() { [ -f "$RUN/$1.pid" ] && ours "$1" "$(cat "$RUN/$1.pid")"; }

# ------------------------------------------------------------------ node
stop_pid kube-proxy
if [ -f "$RUN/kube-proxy-config.yaml" ] && [ -x "$R/bin/kube-proxy" ]; then
  "$R/bin/kube-proxy" --cleanup >"$RUN/logs/kube-proxy-cleanup.log" 2>&1 && log "kube-proxy --cleanup done"
fi
stop_pid kubelet
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
stop_pid containerd 15
for n in kube-scheduler kube-controller-manager kube-apiserver etcd; do stop_pid "$n"; done

# ------------------------------------------------------------------ host clean-up
# mounts a killed kubelet/containerd leave: pod volumes (tmpfs), overlay rootfs, netns and shm under $R
awk '{print $2}' /proc/mounts | grep -E "^$R/" | sort -r | while read -r m; do
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
done
left=$(awk '{print $2}' /proc/mounts | grep -cE "^$R/")
[ "$left" -eq 0 ] || log "WARNING: $left mounts left under $R"

# iptables (both families, all tables): jumps into KUBE-* chains, then the chains; CNI-* likewise unless CNI-*
# chains existed before start (CNI DEL removes per-pod chains; portmap's CNI-HOSTPORT-* stay otherwise)
PREFIX='KUBE-'
[ -f "$RUN/cni-chains-before" ] || PREFIX='(KUBE|CNI)-'
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
for p in /var/log/containers /var/lib/cni /tmp/hostpath_pv /var/lib/kubelet /run/containerd; do
  [ -e "$p" ] && ! grep -qxF "$p" "$RUN/paths-before.txt" 2>/dev/null && [ -f "$RUN/paths-before.txt" ] && rm -rf "$p"
done
if [ -f "$RUN/sysctl-before.txt" ]; then
  while IFS='=' read -r k v; do
    [ "$(sysctl -n "$k" 2>/dev/null)" = "$v" ] || { sysctl -qw "$k=$v" 2>/dev/null && log "restored $k=$v"; }
  done < "$RUN/sysctl-before.txt"
  rm -f "$RUN/sysctl-before.txt"
fi
log "done"

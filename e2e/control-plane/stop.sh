#!/usr/bin/env bash
# Stop what start.sh started: kills exactly the PIDs recorded in $RUN/*.pid (reverse start order).
ROOT=${K8S_CP_ROOT:-$HOME/.cache/tbmq-k8s}
RUN=${RUN:-$ROOT/run}
for n in kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
  f=$RUN/$n.pid
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    echo "stopped $n ($pid)"
  fi
  rm -f "$f"
done

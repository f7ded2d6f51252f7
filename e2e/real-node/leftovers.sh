#!/usr/bin/env bash
# What a run of start.sh left behind, for start.sh, stop.sh and scripts/cluster.sh (sourced) or a caller (run).
# Prints one line:
#   none                    no recorded PID and no mount under $REAL_NODE_ROOT
#   running NAME(PID)...    recorded processes that are still the ones start.sh started (a node is up)
#   stale                   PID files or mounts, but none of the recorded processes is alive: the run ended without
#                           stop.sh (a reboot, a killed session); stop.sh cleans up after it
# A recorded PID counts only while /proc/PID/exe is the executable start.sh recorded beside it, so a PID the
# kernel has since given to another process never makes a dead run look alive (and is never killed).
R=${REAL_NODE_ROOT:-$HOME/.cache/tbmq-real-node}
RUN=${RUN:-$R/run}

# is PID still the process start.sh recorded as NAME? (" (deleted)": the binary was rebuilt since)
ours() { # name pid
  local exe; exe=$(readlink "/proc/$2/exe" 2>/dev/null) || return 1
  [ "${exe% (deleted)}" = "$(cat "$RUN/$1.exe" 2>/dev/null)" ]
}

leftovers() {
  local f n live=() stale=0
  for f in "$RUN"/*.pid; do
    [ -f "$f" ] || continue
    stale=1
    n=$(basename "$f" .pid)
    ours "$n" "$(cat "$f")" && live+=("$n($(cat "$f"))")
  done
  if awk -v r="$R" '$2 == r || index($2, r "/") == 1 {f=1} END {exit !f}' /proc/mounts; then stale=1; fi
  if [ ${#live[@]} -gt 0 ]; then echo "running ${live[*]}"
  elif [ "$stale" = 1 ]; then echo stale
  else echo none
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then leftovers; fi

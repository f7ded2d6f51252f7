#!/usr/bin/env bash
# Installs the Debian packages the local stack, the tests and the benchmarks run:
# redis-server/redis-cli (Redis and Redis Cluster), mosquitto (the benchmark peer),
# mosquitto_pub/sub (tests and the README's examples), openssl (TLS certificates), curl and python3
# (the e2e control-plane scripts), prometheus (the dashboard test).
set -euo pipefail
need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-cli >/dev/null || need+=(redis-tools)
command -v mosquitto >/dev/null || [ -x /usr/sbin/mosquitto ] || need+=(mosquitto)
command -v mosquitto_pub >/dev/null || need+=(mosquitto-clients)
command -v openssl >/dev/null || need+=(openssl)
command -v setpriv >/dev/null || need+=(util-linux)
# The operator e2e's control-plane scripts wait on the API server with curl and read JSON with python3.
command -v curl >/dev/null || need+=(curl)
command -v python3 >/dev/null || need+=(python3)
# The monitoring test scrapes a broker with a real Prometheus (docs/operations.md).
command -v prometheus >/dev/null || need+=(prometheus)
[ ${#need[@]} -eq 0 ] && exit 0

echo "Installing missing packages: ${need[*]}"
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO=(sudo); else
    echo "error: need root (or sudo) to install: ${need[*]}. Install them with apt-get and re-run." >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! "${SUDO[@]}" apt-get install -y --no-install-recommends "${need[@]}" >/tmp/tbmq-apt.log 2>&1; then
  "${SUDO[@]}" apt-get update >>/tmp/tbmq-apt.log 2>&1 || true
  if ! "${SUDO[@]}" apt-get install -y --no-install-recommends "${need[@]}" >>/tmp/tbmq-apt.log 2>&1; then
    echo "error: apt-get could not install ${need[*]}; see /tmp/tbmq-apt.log" >&2
    exit 1
  fi
fi
# The Debian package may start its own redis/mosquitto service; the stack runs its own processes
# on free ports, so a system service is harmless, but say so.
echo "Installed: ${need[*]}"

#!/usr/bin/env bash
# Builds the broker and operator container images and the OLM bundle image with no Docker daemon,
# as OCI image archives:
#   target/images/tbmq-broker-<v>.oci.tar            (image $REGISTRY/tbmq-broker:<v>)
#   target/images/tbmq-operator-<v>.oci.tar          (image $REGISTRY/tbmq-operator:<v>; its default broker image is
#                                                     $REGISTRY/tbmq-broker:<v>, so build and deploy with the same values)
#   target/images/tbmq-operator-bundle-<v>.oci.tar   (bundle/bundle.Dockerfile: its LABELs and COPYs)
# Base: a JRE made by jlink from the build JDK, on glibc from Debian's libc6 and libgcc-s1 packages
# (apt-get download + dpkg-deb -x); nothing else, no shell. Layers: base, then the Quarkus app.
# Load with e.g. `skopeo copy oci-archive:target/images/tbmq-broker-0.1.0.oci.tar docker-daemon:tbmq/broker:0.1.0`
# or push with `skopeo copy oci-archive:... docker://<registry>/tbmq/broker:0.1.0`.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${VERSION:-0.1.0}
REGISTRY=${REGISTRY:-docker.io/tbmq}
OUT=${OUT:-target/images}
WORK=${WORK:-target/images/work}
JAVA_HOME=${JAVA_HOME:?JAVA_HOME must point to a JDK (scripts/env.sh sets it)}

need=()
command -v umoci >/dev/null || need+=(umoci)
command -v dpkg-deb >/dev/null || need+=(dpkg)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=(); [ "$(id -u)" -eq 0 ] || SUDO=(sudo)
  "${SUDO[@]}" apt-get install -y --no-install-recommends "${need[@]}" >/tmp/tbmq-apt.log 2>&1 \
    || { "${SUDO[@]}" apt-get update >>/tmp/tbmq-apt.log 2>&1; "${SUDO[@]}" apt-get install -y --no-install-recommends "${need[@]}" >>/tmp/tbmq-apt.log 2>&1; } \
    || { echo "error: could not install ${need[*]} (see /tmp/tbmq-apt.log)" >&2; exit 1; }
fi
for app in broker operator; do
  [ -f "$app/target/quarkus-app/quarkus-run.jar" ] || { echo "error: $app/target/quarkus-app missing; run make build first" >&2; exit 1; }
done

rm -rf "$WORK"; mkdir -p "$WORK" "$OUT"
WORK=$(cd "$WORK" && pwd); OUT=$(cd "$OUT" && pwd)

# ---- base rootfs: glibc + JRE + a non-root user
BASE=$WORK/base
mkdir -p "$BASE"/{etc,tmp,opt,proc,sys,dev} "$WORK/debs"
chmod 1777 "$BASE/tmp"
download() { (cd "$WORK/debs" && apt-get download libc6 libgcc-s1 >>/tmp/tbmq-apt.log 2>&1); }
if ! download; then
  # A fresh machine may have no package lists yet.
  SUDO=(); [ "$(id -u)" -eq 0 ] || SUDO=(sudo)
  "${SUDO[@]}" apt-get update >>/tmp/tbmq-apt.log 2>&1 || true
  download || { echo "error: apt-get download libc6 libgcc-s1 failed (needs the Debian package mirror; see /tmp/tbmq-apt.log)" >&2; exit 1; }
fi
for deb in "$WORK"/debs/*.deb; do dpkg-deb -x "$deb" "$BASE"; done
rm -rf "$BASE"/usr/share/{doc,lintian,locale,man} "$BASE"/usr/lib/x86_64-linux-gnu/gconv
"$JAVA_HOME/bin/jlink" --add-modules java.base,java.desktop,java.instrument,java.logging,java.management,java.naming,\
java.net.http,java.prefs,java.scripting,java.security.jgss,java.security.sasl,java.sql,java.transaction.xa,java.xml,\
jdk.crypto.ec,jdk.crypto.cryptoki,jdk.jfr,jdk.management,jdk.naming.dns,jdk.net,jdk.unsupported,jdk.zipfs \
  --strip-debug --no-man-pages --no-header-files --compress=zip-6 --output "$BASE/opt/java"
printf 'root:x:0:0:root:/root:/sbin/nologin\ntbmq:x:185:185:tbmq:/app:/sbin/nologin\n' > "$BASE/etc/passwd"
printf 'root:x:0:\ntbmq:x:185:\n' > "$BASE/etc/group"
printf 'hosts: files dns\n' > "$BASE/etc/nsswitch.conf"

# ---- the broker's AOT cache (JDK 25: JEP 483 and 514)
# The classes a broker's start loads and links, mapped from one file instead of read from the jars:
# Quarkus starts in about two thirds of the time (docs/operations.md, "Start-up").
# Recorded by a training run of the image's own JVM and jars under chroot, at the paths the container has:
# the JVM takes a cache only from the same runtime image and class path (the jars' mtimes in whole seconds,
# which is all an image layer keeps of them). The run needs no Kafka or Redis: with no network at all it
# ends once Quarkus has started and the broker waits for Kafka, which is where a start spends its class
# loading. Its /proc, /dev and network live in namespaces of their own, so nothing stays mounted or bound.
JVM_FLAGS=(-XX:MaxRAMPercentage=75 -XX:+CrashOnOutOfMemoryError -XX:+ErrorFileToStderr -XX:-CreateCoredumpOnCrash)
AOT_CACHE=/app/broker.aot
train_aot_cache() { # rootfs: writes $rootfs$AOT_CACHE, or warns and leaves none (the image then starts without)
  local rootfs=$1 log=$WORK/aot-training.log pid i started=0
  if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
    echo "warning: the broker image gets no AOT cache (its training run needs root and unshare); it starts slower" >&2
    return 0
  fi
  find "$rootfs/app" -exec touch -h -d "@$(date +%s)" {} +
  # setsid: the JVM (every command below execs the next) leads a process group with the JVM it starts to
  # write the cache, so both can be stopped together.
  setsid unshare --mount --net --propagation private bash -c '
    r=$1; shift
    mount -t proc proc "$r/proc" && mount -t tmpfs -o mode=755 tmpfs "$r/dev" || exit 1
    mknod -m 666 "$r/dev/null" c 1 3 && mknod -m 666 "$r/dev/zero" c 1 5 \
      && mknod -m 666 "$r/dev/random" c 1 8 && mknod -m 666 "$r/dev/urandom" c 1 9 || exit 1
    c=$(command -v chroot)
    exec env -i PATH=/opt/java/bin JAVA_HOME=/opt/java TBMQ_NODE_ID=aot-training \
      JAVA_TOOL_OPTIONS="-Xmx512m -XX:MaxDirectMemorySize=256m" "$c" --userspec=185:185 "$r" "$@"' \
    train "$rootfs" /opt/java/bin/java "${JVM_FLAGS[@]}" -XX:+UseG1GC -XX:AOTCacheOutput=$AOT_CACHE \
      -Dtbmq.kafka.bootstrap-servers=127.0.0.1:1 -Dtbmq.redis.mode=cluster -Dtbmq.redis.nodes=127.0.0.1:1 \
      -Dquarkus.http.port=0 -Dtbmq.listeners.tcp.port=0 -Dtbmq.listeners.ws.port=0 \
      -jar /app/quarkus-run.jar >"$log" 2>&1 &
  pid=$!
  trap 'kill -KILL -- "-$pid" 2>/dev/null' EXIT
  for i in $(seq 1 600); do # up to 2 minutes for Quarkus to start
    grep -qs "started in" "$log" && { started=1; break; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 600); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.2; done # the cache is written at exit
  kill -KILL -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  trap - EXIT
  find "$rootfs/tmp" -mindepth 1 -delete # the run's hsperfdata and Vert.x cache are not the image's
  rm -f "$rootfs$AOT_CACHE.config"
  if [ "$started" = 1 ] && [ -s "$rootfs$AOT_CACHE" ] && grep -q "AOTCache creation is complete" "$log"; then
    chown 0:0 "$rootfs$AOT_CACHE"; chmod 444 "$rootfs$AOT_CACHE"
    echo "AOT cache for the broker: $AOT_CACHE ($(du -h "$rootfs$AOT_CACHE" | cut -f1))"
  else
    rm -f "$rootfs$AOT_CACHE"
    echo "warning: the broker's AOT training run did not end with a cache (see $log); the image starts without one" >&2
  fi
}

build_image() { # name app-dir "env..." ports...
  local name=$1 app=$2 envs=$3; shift 3
  local layout=$WORK/$name-layout bundle=$WORK/$name-bundle
  umoci init --layout "$layout"
  umoci new --image "$layout:$VERSION"
  umoci unpack --image "$layout:$VERSION" "$bundle" >/dev/null
  cp -a "$BASE"/. "$bundle/rootfs/"
  umoci repack --refresh-bundle --image "$layout:$VERSION" "$bundle" # the next layer then holds only /app
  mkdir -p "$bundle/rootfs/app"
  cp -a "$app"/. "$bundle/rootfs/app/"
  chown -R 185:185 "$bundle/rootfs/app"
  local aot=()
  if [ "$name" = tbmq-broker ]; then
    train_aot_cache "$bundle/rootfs"
    [ -s "$bundle/rootfs$AOT_CACHE" ] && aot=(--config.entrypoint "-XX:AOTCache=$AOT_CACHE")
  fi
  umoci repack --image "$layout:$VERSION" "$bundle"
  local ports=() env=() flags=() f
  for p in "$@"; do ports+=(--config.exposedports "$p"); done
  for f in "${JVM_FLAGS[@]}"; do flags+=(--config.entrypoint "$f"); done
  # The version the image is tagged with is the one the application reports.
  for e in TBMQ_VERSION=$VERSION $envs; do env+=(--config.env "$e"); done
  # CrashOnOutOfMemoryError: a JVM out of heap in one thread (a Kafka client's network thread) lives on
  # without it; ending lets Kubernetes restart the container. The crash report goes to stderr, so
  # `kubectl logs --previous` names the thread and the allocation that ran out (no core file).
  umoci config --image "$layout:$VERSION" --author "tbmq" --os linux --architecture amd64 \
    --config.user 185:185 --config.workingdir /app \
    --config.env JAVA_HOME=/opt/java --config.env PATH=/opt/java/bin:/usr/bin:/bin \
    --config.entrypoint /opt/java/bin/java "${flags[@]}" "${aot[@]}" \
    --config.entrypoint -jar --config.entrypoint /app/quarkus-run.jar \
    "${ports[@]}" "${env[@]}" \
    --config.label "org.opencontainers.image.title=$name" --config.label "org.opencontainers.image.version=$VERSION"
  umoci gc --layout "$layout"
  tar -C "$layout" -cf "$OUT/$name-$VERSION.oci.tar" .
  echo "$OUT/$name-$VERSION.oci.tar ($(du -h "$OUT/$name-$VERSION.oci.tar" | cut -f1))"
}
build_image tbmq-broker broker/target/quarkus-app "" 1883/tcp 8883/tcp 8083/tcp 8084/tcp 8080/tcp
build_image tbmq-operator operator/target/quarkus-app "TBMQ_OPERATOR_BROKER_IMAGE=$REGISTRY/tbmq-broker:$VERSION" 8080/tcp

# ---- the OLM bundle image: what `docker build -f bundle.Dockerfile bundle/` makes, from the same file
build_bundle_image() {
  local name=tbmq-operator-bundle
  local layout=$WORK/$name-layout bundle=$WORK/$name-bundle dockerfile=bundle/bundle.Dockerfile
  grep -qx 'FROM scratch' "$dockerfile" || { echo "error: $dockerfile must build FROM scratch" >&2; exit 1; }
  umoci init --layout "$layout"
  umoci new --image "$layout:$VERSION"
  umoci unpack --image "$layout:$VERSION" "$bundle" >/dev/null
  local labels=() line src dst
  while IFS= read -r line; do
    case "$line" in
      LABEL\ *) labels+=(--config.label "${line#LABEL }") ;;
      COPY\ *)
        read -r _ src dst <<<"$line"
        mkdir -p "$bundle/rootfs/$dst"
        cp -a "bundle/$src/." "$bundle/rootfs/$dst"
        ;;
      ''|\#*|FROM\ *) ;;
      *) echo "error: $dockerfile: instruction not supported here: $line" >&2; exit 1 ;;
    esac
  done < "$dockerfile"
  umoci repack --image "$layout:$VERSION" "$bundle"
  umoci config --image "$layout:$VERSION" --author "tbmq" --os linux --architecture amd64 "${labels[@]}"
  umoci gc --layout "$layout"
  tar -C "$layout" -cf "$OUT/$name-$VERSION.oci.tar" .
  echo "$OUT/$name-$VERSION.oci.tar ($(du -h "$OUT/$name-$VERSION.oci.tar" | cut -f1))"
}
build_bundle_image

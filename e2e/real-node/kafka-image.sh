#!/usr/bin/env bash
# Builds localhost/tbmq-kafka:<kafka version>: a single-node KRaft Kafka (broker and controller in one process)
# from the Maven-resolved kafka_2.13 jars (local-stack's classpath) on a jlink'd JRE, for the Strimzi stand-in
# of the e2e tests and the local cluster (a test double: production uses Strimzi's own images).
# Runs as uid 1001 under the restricted Pod Security Standard; formats its storage on first start.
# Usage: kafka-image.sh CLASSPATH_FILE [OUT_DIR]   (cached: the same inputs return at once)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CP_FILE=$(readlink -f "${1:?usage: kafka-image.sh CLASSPATH_FILE [OUT_DIR]}")
OUT=${2:-${REAL_NODE_ROOT:-$HOME/.cache/tbmq-real-node}/images/kafka}
JAVA_HOME=${JAVA_HOME:?JAVA_HOME must point to a JDK}
VERSION=$(tr ':' '\n' < "$CP_FILE" | sed -n 's#.*/kafka_2.13-\([0-9.]*\)\.jar$#\1#p' | head -n1)
[ -n "$VERSION" ] || { echo "error: no kafka_2.13 jar in $CP_FILE" >&2; exit 1; }
STAMP=$( { cat "$0" "$CP_FILE"; "$JAVA_HOME/bin/java" -version 2>&1; } | sha256sum | cut -c1-16)
ARCHIVE=$OUT/tbmq-kafka-$VERSION.oci.tar
if [ -f "$ARCHIVE" ] && [ "$(cat "$OUT/.stamp" 2>/dev/null)" = "$STAMP" ]; then
  echo "$ARCHIVE"; exit 0
fi
rm -rf "$OUT"; mkdir -p "$OUT/work"; cd "$OUT/work"
ROOTFS=rootfs; mkdir -p $ROOTFS/{bin,etc,tmp,opt/kafka/libs,var/lib/kafka}; chmod 1777 $ROOTFS/tmp
"$JAVA_HOME/bin/jlink" --add-modules java.base,java.compiler,java.desktop,java.instrument,java.logging,java.management,\
java.management.rmi,java.naming,java.net.http,java.rmi,java.scripting,java.security.jgss,java.security.sasl,java.sql,\
java.transaction.xa,java.xml,jdk.crypto.ec,jdk.jfr,jdk.management,jdk.naming.dns,jdk.net,jdk.unsupported,jdk.zipfs \
  --strip-debug --no-man-pages --no-header-files --compress=zip-6 --output $ROOTFS/opt/java
# The system libraries the JRE links (glibc, libz...): every absolute /lib or /usr/lib path ldd names.
for lib in $( { find $ROOTFS/opt/java -type f -name '*.so'; echo $ROOTFS/opt/java/bin/java; } | xargs ldd 2>/dev/null \
    | grep -oE '(/usr)?/lib[^ ]*' | sort -u); do
  [ -e "$lib" ] && install -D -m755 "$(readlink -f "$lib")" "$ROOTFS$lib"
done
install -D -m755 "$(readlink -f /lib64/ld-linux-x86-64.so.2)" $ROOTFS/lib64/ld-linux-x86-64.so.2
install -m755 /bin/busybox $ROOTFS/bin/busybox
for a in sh mkdir cat; do ln -s busybox $ROOTFS/bin/$a; done
tr ':' '\n' < "$CP_FILE" | while read -r jar; do [ -f "$jar" ] && cp "$jar" $ROOTFS/opt/kafka/libs/; done
cat > $ROOTFS/opt/kafka/start.sh <<'SH'
#!/bin/sh
# KAFKA_ADVERTISED (host:port clients should use; the pod IP), KAFKA_CLUSTER_ID, KAFKA_HEAP (default 384m).
set -e
CP=$(echo /opt/kafka/libs/*.jar | sed 's/ /:/g')
cat > /tmp/server.properties <<EOF2
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:9093
listeners=PLAINTEXT://0.0.0.0:9092,CONTROLLER://127.0.0.1:9093
advertised.listeners=PLAINTEXT://${KAFKA_ADVERTISED}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=/var/lib/kafka/data
offsets.topic.replication.factor=1
offsets.topic.num.partitions=8
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
num.partitions=1
log.segment.bytes=67108864
num.network.threads=2
num.io.threads=2
EOF2
JAVA="/opt/java/bin/java -Xmx${KAFKA_HEAP:-384m} -Xms${KAFKA_HEAP:-384m} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp $CP"
[ -f /var/lib/kafka/data/meta.properties ] || $JAVA kafka.tools.StorageTool format -t "${KAFKA_CLUSTER_ID}" -c /tmp/server.properties --ignore-formatted
exec $JAVA kafka.Kafka /tmp/server.properties
SH
chmod 755 $ROOTFS/opt/kafka/start.sh
printf 'root:x:0:0:root:/root:/sbin/nologin\nkafka:x:1001:1001:kafka:/var/lib/kafka:/sbin/nologin\n' > $ROOTFS/etc/passwd
printf 'root:x:0:\nkafka:x:1001:\n' > $ROOTFS/etc/group
chown -R 1001:1001 $ROOTFS/var/lib/kafka
umoci init --layout layout
umoci new --image layout:$VERSION
umoci unpack --image layout:$VERSION bundle >/dev/null
cp -a $ROOTFS/. bundle/rootfs/
umoci repack --image layout:$VERSION bundle
umoci config --image layout:$VERSION --os linux --architecture amd64 --config.user 1001:1001 --config.workingdir /var/lib/kafka \
  --config.env PATH=/opt/java/bin:/bin --config.entrypoint /opt/kafka/start.sh --config.exposedports 9092/tcp \
  --config.label "org.opencontainers.image.title=tbmq-kafka" --config.label "org.opencontainers.image.version=$VERSION"
umoci gc --layout layout
(cd layout && tar -cf "$ARCHIVE" .)
cd "$OUT"; rm -rf work
echo "$STAMP" > "$OUT/.stamp"
echo "$ARCHIVE"

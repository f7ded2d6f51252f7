#!/usr/bin/env bash
# Coverage-guided fuzzing of the MQTT decoder and every packet handler (Jazzer + libFuzzer),
# seeded from the byte-level packet table. Usage: scripts/fuzz.sh [seconds] (default 300).
# Needs the broker's test classes (make build, or any mvn install of broker).
# The corpus grows in broker/target/fuzz/corpus across runs; a crash leaves its input in
# broker/target/fuzz/crash-* and fails the run.
set -euo pipefail
cd "$(dirname "$0")/../broker"
SECONDS_TO_RUN="${1:-${FUZZ_SECONDS:-300}}"
OUT=target/fuzz
[ -f target/test.classpath ] && [ -d target/test-classes ] || { echo "fuzz: build the broker first (make build)" >&2; exit 2; }
CP="target/test-classes:target/classes:$(cat target/test.classpath)"
mkdir -p "$OUT/corpus" "$OUT/seeds"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
"$JAVA" -cp "$CP" io.tbmq.broker.fuzz.FuzzSeeds "$OUT/seeds"
LOG="$OUT/fuzz.log"
echo "fuzz: ${SECONDS_TO_RUN}s of PacketFuzzer; libFuzzer log in broker/$LOG"
set +e
"$JAVA" -XX:+EnableDynamicAgentLoading --enable-native-access=ALL-UNNAMED -Xmx2g \
    -Dorg.jboss.logging.provider=slf4j -Dio.netty.leakDetection.level=simple \
    -cp "$CP" com.code_intelligence.jazzer.Jazzer \
    --target_class=io.tbmq.broker.fuzz.PacketFuzzer \
    --instrumentation_includes='io.tbmq.broker.**:io.netty.handler.codec.mqtt.**' \
    --custom_hook_excludes='java.**:jdk.**:sun.**' \
    --reproducer_path="$OUT" \
    -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -rss_limit_mb=3072 -timeout=20 \
    -artifact_prefix="$OUT/" "$OUT/corpus" "$OUT/seeds" >"$LOG" 2>&1
rc=$?
set -e
grep -E '^#[0-9]+\s+(DONE|INITED)|^Done [0-9]+ runs' "$LOG" || true
if [ $rc -ne 0 ]; then
    grep -A30 -E '^== Java Exception|^==[0-9]+== ERROR' "$LOG" | head -60 >&2 || tail -40 "$LOG" >&2
    echo "fuzz: a crash (exit $rc). Its input is in broker/$OUT/crash-*: fix the cause, then copy the file into" >&2
    echo "      broker/src/test/resources/fuzz/packet-crashes/ so PacketFuzzerTest replays it from then on." >&2
    exit 1
fi
echo "fuzz: no crash; corpus $(ls "$OUT/corpus" | wc -l) inputs"

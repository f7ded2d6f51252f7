#!/usr/bin/env bash
# make bench: every benchmark scenario against this broker and against mosquitto, same machine,
# same run. Results go to docs/benchmarks.md (generated section), docs/bench/results.json and plots.
# BENCH_SECONDS (default 30), BENCH_ONLY (scenario prefix), BENCH_REPEAT (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
exec java -cp "loadgen/target/classes:$(cat loadgen/target/runtime.classpath)" io.tbmq.loadgen.bench.BenchMain "$PWD" "$@"

#!/usr/bin/env bash
# Builds the libFuzzer driver and runs every target for a bounded time (Fuzz/README.md).
#
#     Fuzz/run.sh [seconds-per-target] [target...]
#
# Exits non-zero when a target crashes (a trap, an AddressSanitizer report, a leak) or
# over-allocates (-malloc_limit_mb, -rss_limit_mb); the input that did it is left in
# Fuzz/.artifacts/<target>/. Each target starts from its committed corpus, Fuzz/Corpus/<target>/;
# new inputs libFuzzer finds go to Fuzz/.work/<target>/ (not committed).
set -euo pipefail
cd "$(dirname "$0")"

seconds="${1:-20}"
shift || true
targets=("$@")

# The memory bounds every run is held to: one malloc over MALLOC_LIMIT_MB, or a resident set
# over RSS_LIMIT_MB, is a failure. The engine never needs more than its largest block (257 MiB)
# plus a blob chunk for any input here.
MALLOC_LIMIT_MB="${MALLOC_LIMIT_MB:-512}"
RSS_LIMIT_MB="${RSS_LIMIT_MB:-2048}"

swiftc="$(command -v swiftc)"
toolchain="$(dirname "$(dirname "$(readlink -f "$swiftc")")")"
no_main="$(ls "$toolchain"/lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a | head -n 1)"
if [ ! -f "$no_main" ]; then
    echo "run.sh: libclang_rt.fuzzer_no_main not found under $toolchain/lib/clang" >&2
    exit 1
fi

# AddressSanitizer and libFuzzer's coverage on every module (the engine's too), libFuzzer linked
# without its main. The linker's "Cannot export local symbol" lines are noise from gold.
swift build -c release --scratch-path .build/fuzz --product walstore-fuzz \
    --sanitize=address \
    -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp \
    -Xlinker "$no_main" 2>&1 | { grep -v "Cannot export local symbol" || true; }
if [ "${PIPESTATUS[0]}" -ne 0 ]; then
    echo "run.sh: the build failed" >&2
    exit 1
fi
binary=".build/fuzz/release/walstore-fuzz"

if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <("$binary" list)
fi

# Traps must reach libFuzzer's signal handler, not Swift's backtracer.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}"
# A false report of a global built once (see lsan.supp).
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/lsan.supp}"

failed=()
for target in "${targets[@]}"; do
    mkdir -p ".work/$target" ".artifacts/$target" "Corpus/$target"
    log=".artifacts/$target/run.log"
    echo "== $target (${seconds}s)"
    set +e
    "$binary" "$target" ".work/$target" "Corpus/$target" \
        -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb="$RSS_LIMIT_MB" -malloc_limit_mb="$MALLOC_LIMIT_MB" \
        -max_len=262144 -print_final_stats=1 \
        -artifact_prefix=".artifacts/$target/" >"$log" 2>&1 </dev/null
    status=$?
    set -e
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)" "$log" || true
    if [ $status -ne 0 ]; then
        echo "run.sh: $target failed (exit $status); see Fuzz/$log" >&2
        grep -E "ERROR|SUMMARY|Fatal error|deadly|out-of-memory|malloc\(" "$log" | head -n 5 >&2 || true
        failed+=("$target")
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "run.sh: crashed: ${failed[*]}" >&2
    exit 1
fi
echo "run.sh: ${#targets[@]} targets, no crash"

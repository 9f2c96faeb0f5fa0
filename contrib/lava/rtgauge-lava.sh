#!/bin/sh
# The run step of rtgauge.yaml: picks the static rtgauge binary for this board, measures,
# and reports the result through lava-test-case (printed when it is not on PATH).
# Parameters come from the environment (see rtgauge.yaml): PROBES SUITE DURATION MODE LOAD
# CPUS SPEC BASELINE ARTIFACTS RTGAUGE_URL; OUTPUT is where the result is written.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out="${OUTPUT:-$here/output}"
mkdir -p "$out"

report() {
    if command -v lava-test-case >/dev/null 2>&1; then
        lava-test-case "$@"
    else
        echo "lava-test-case $*"
    fi
}

case "$(uname -m)" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *)
        echo "rtgauge: no static binary for $(uname -m) (x86_64 and aarch64 are built)"
        report rtgauge-binary --result skip
        exit 0
        ;;
esac

bin=""
if [ -x "$here/bin/rtgauge-$arch" ]; then
    bin="$here/bin/rtgauge-$arch"
elif [ -n "${RTGAUGE_URL:-}" ]; then
    url=$(printf '%s' "$RTGAUGE_URL" | sed "s/{arch}/$arch/g")
    mkdir -p "$out/dist"
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL --retry 3 -o "$out/dist/rtgauge.tar.gz" "$url"
    else
        wget -q -O "$out/dist/rtgauge.tar.gz" "$url"
    fi && tar -xzf "$out/dist/rtgauge.tar.gz" -C "$out/dist" &&
        bin=$(find "$out/dist" -type f -name rtgauge | head -n 1)
elif command -v rtgauge >/dev/null 2>&1; then
    bin=$(command -v rtgauge)
fi
if [ -z "$bin" ]; then
    echo "rtgauge: no binary: ship bin/rtgauge-$arch beside rtgauge.yaml or set RTGAUGE_URL"
    report rtgauge-binary --result fail
    exit 0
fi
report rtgauge-binary --result pass
"$bin" --version

# PROBES, MODE, LOAD and CPUS are passed as written (several probes space-separated).
set -- run --quiet --no-report --force --output "$out/result.json" --duration "${DURATION:-60s}"
[ -n "${SUITE:-}" ] && [ -z "${PROBES:-}" ] && set -- "$@" --suite "$SUITE"
[ -n "${MODE:-}" ] && set -- "$@" --mode "$MODE"
[ -n "${LOAD:-}" ] && set -- "$@" --load "$LOAD"
[ -n "${CPUS:-}" ] && set -- "$@" --cpus "$CPUS"
# shellcheck disable=SC2086 # PROBES is a list of words.
"$bin" "$@" ${PROBES:-}
rc=$?
# 0 measured, 2 a threshold crossed (still measured); anything else lost the measurement.
case $rc in
    0 | 2) report rtgauge-run --result pass ;;
    *) report rtgauge-run --result fail ;;
esac
[ -f "$out/result.json" ] || exit 0

set -- show "$out/result.json" --format lava
[ -n "${SPEC:-}" ] && set -- "$@" --spec "$SPEC"
[ -n "${BASELINE:-}" ] && set -- "$@" --baseline "$BASELINE"
"$bin" "$@"
rc=$?
# 0 passed, 2 a limit failed, 3 undecided: the test cases say which; 1 could not judge.
[ $rc -eq 1 ] && report rtgauge-verdict --result fail

if [ -n "${ARTIFACTS:-}" ]; then
    "$bin" report "$out/result.json" --output "$out/report.html" >/dev/null
    ok=pass
    for f in "$out/result.json" "$out/report.html"; do
        curl -fsS -F "path=@$f" "$ARTIFACTS" || ok=fail
    done
    report rtgauge-artifacts --result $ok
fi
exit 0

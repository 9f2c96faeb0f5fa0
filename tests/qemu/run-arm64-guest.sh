#!/usr/bin/env bash
# Boots Debian's arm64 PREEMPT_RT kernel (linux-image-rt-arm64) in qemu-system-aarch64 (TCG
# software emulation, the `virt` machine) with an initramfs holding the static aarch64
# rtgauge and a static busybox, runs `rtgauge doctor --json` and a short `rtgauge run cyclic`
# in the guest and collects their output (docs/targets.md).
#
# usage: run-arm64-guest.sh RTGAUGE_AARCH64_BIN OUTDIR
#
#   RTGAUGE_AARCH64_BIN  the static aarch64 binary (scripts/build-release.sh --arch aarch64)
#   OUTDIR               receives console.log (the guest's serial console), doctor.json and
#                        doctor.rc, result.json and run.rc, uname.txt and realtime.txt
#
# Needs qemu-system-arm (qemu-system-aarch64) and the arm64 architecture in dpkg (the release
# script's --install adds it): the kernel and busybox-static:arm64 packages are fetched with
# `apt-get download` into RTGAUGE_ARM64_CACHE (default target/qemu-arm64) once per version.
# RTGAUGE_ARM64_TIMEOUT bounds the whole guest in seconds (default 300).
#
# Exit status: 0 when the guest reached the end of its script (whatever rtgauge's own exit
# statuses, in *.rc), non-zero when a package could not be fetched or the guest did not finish.
set -euo pipefail

die() { echo "run-arm64-guest.sh: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: $0 RTGAUGE_AARCH64_BIN OUTDIR"
binary=$(realpath "$1")
out=$(realpath -m "$2")
[ -x "$binary" ] || die "$binary is not an executable: build it with scripts/build-release.sh --arch aarch64"
command -v qemu-system-aarch64 >/dev/null || die "qemu-system-aarch64 not found: apt-get install qemu-system-arm"
cd "$(dirname "$0")/../.."
cache=$(realpath -m "${RTGAUGE_ARM64_CACHE:-target/qemu-arm64}")
timeout_s=${RTGAUGE_ARM64_TIMEOUT:-300}
mkdir -p "$cache" "$out"

# The metapackage names the image package of the current kernel release.
image=$(apt-cache depends linux-image-rt-arm64:arm64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[^ ]*\)/\1/p' | head -1)
[ -n "$image" ] || die "no linux-image-rt-arm64 in apt's lists: dpkg --add-architecture arm64 && apt-get update"
(
  cd "$cache"
  for package in "$image" busybox-static:arm64; do
    ls "${package%%:*}"_*.deb >/dev/null 2>&1 || apt-get download -q "$package" >/dev/null 2>&1 ||
      die "apt-get download $package failed"
  done
)
kernel_deb=$(ls "$cache/${image%%:*}"_*.deb | tail -1)
busybox_deb=$(ls "$cache"/busybox-static_*.deb | tail -1)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb --fsys-tarfile "$kernel_deb" | tar -x -C "$work" --wildcards './boot/vmlinuz-*'
kernel=$(ls "$work"/boot/vmlinuz-* | head -1)
root="$work/root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,out}
dpkg-deb --fsys-tarfile "$busybox_deb" | tar -x -O ./bin/busybox > "$root/bin/busybox"
chmod 755 "$root/bin/busybox"
install -m 755 "$binary" "$root/bin/rtgauge"

# Outputs go to the console between markers, base64 so the console cannot mangle them.
cat > "$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin RTGAUGE_NO_STORE=1 HOME=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
section() {
  name=$1; shift
  "$@" > /out/$name 2>/out/$name.err; rc=$?
  echo "===RTGAUGE-$name-BEGIN==="; base64 /out/$name; echo "===RTGAUGE-$name-END rc=$rc==="
  cat /out/$name.err
}
section uname.txt uname -a
section realtime.txt cat /sys/kernel/realtime
section doctor.json rtgauge doctor --json
section run.log rtgauge run cyclic --mode rt --cpus 1 --duration 3s --warmup 500ms --no-report -q -o /tmp/result.json
section result.json cat /tmp/result.json
echo ===RTGAUGE-GUEST-DONE===
poweroff -f
INIT
chmod 755 "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd.gz"

start=$SECONDS
timeout "$timeout_s" qemu-system-aarch64 -M virt -cpu max -smp 2 -m 1024 -nographic -no-reboot \
  -kernel "$kernel" -initrd "$work/initrd.gz" \
  -append "console=ttyAMA0 rdinit=/init panic=-1 quiet" > "$out/console.log" 2>"$out/qemu.err" || true
tr -d '\r' < "$out/console.log" > "$work/console"
grep -q '^===RTGAUGE-GUEST-DONE===' "$work/console" ||
  die "the guest did not finish in ${timeout_s}s: see $out/console.log"
for name in uname.txt realtime.txt doctor.json run.log result.json; do
  sed -n "/^===RTGAUGE-$name-BEGIN===\$/,/^===RTGAUGE-$name-END rc=/p" "$work/console" | sed '1d;$d' | base64 -d > "$out/$name"
  sed -n "s/^===RTGAUGE-$name-END rc=\([0-9]*\)===\$/\1/p" "$work/console" > "$out/${name%.*}.rc"
done
echo "run-arm64-guest.sh: $(basename "$kernel") booted and ran rtgauge in $((SECONDS - start)) s"

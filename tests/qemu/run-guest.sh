#!/usr/bin/env bash
# Boot a Debian kernel under QEMU (software emulation) with an initramfs that
# holds rtgauge, run commands in the guest and collect their output.
#
# usage: run-guest.sh KERNEL_FLAVOUR RTGAUGE_BIN OUTDIR
#
#   KERNEL_FLAVOUR  rt       -> Debian's PREEMPT_RT kernel (linux-image-rt-amd64)
#                   vanilla  -> Debian's standard kernel   (linux-image-amd64)
#                   or any package name starting with linux-image-
#   RTGAUGE_BIN     binary copied to /usr/bin/rtgauge in the guest, with the
#                   shared libraries `ldd` finds for it and the dynamic loader
#   OUTDIR          receives console.log (serial console: kernel messages and
#                   a readable, cut copy of every output), data.log (second
#                   serial port: each output between ===RTGAUGE-NAME-BEGIN
#                   gzip-base64=== and ===RTGAUGE-NAME-END rc=N=== markers),
#                   the decoded NAME.out (stdout) / NAME.err (stderr) /
#                   NAME.rc (exit status) per guest command, doctor.json and
#                   result.json (copies of the `doctor` and `result` outputs),
#                   kernel.env (package, version, boot time) and qemu.err
#
# Environment:
#   RTGAUGE_QEMU_CACHE     download/extraction cache
#                          (default ${XDG_CACHE_HOME:-$HOME/.cache}/rtgauge-qemu)
#   RTGAUGE_QEMU_CMDS      file with the guest commands, one per line:
#                          `NAME shell command...` (blank lines and # comments
#                          ignored; NAME is [A-Za-z0-9_-]+). Default: the
#                          rtgauge doctor + short cyclic run listed below.
#   RTGAUGE_QEMU_CMD_TIMEOUT  limit for each guest command in seconds (120)
#   RTGAUGE_QEMU_EXTRA     more executables (space-separated host paths) to put
#                          in the guest's /usr/bin, with their libraries
#   RTGAUGE_QEMU_PACKAGES  Debian packages (space-separated, e.g. rtla) whose
#                          executables go into the guest's /usr/bin; see
#                          "Packages" below
#   RTGAUGE_QEMU_TIMEOUT   hard limit for the whole guest run in seconds (240)
#   RTGAUGE_QEMU_SMP       guest CPUs (2)
#   RTGAUGE_QEMU_MEM       guest memory in MiB (1024)
#   RTGAUGE_QEMU_APPEND    extra kernel command-line arguments
#   RTGAUGE_QEMU_OFFLINE=1 never ask apt; use the newest cached kernel
#   RTGAUGE_QEMU_BZIMAGE=1 boot the compressed bzImage, not the cached vmlinux
#   RTGAUGE_QEMU_KEEP=1    keep the initramfs work directory (debugging)
#   RTGAUGE_QEMU_GPIO_SIM=1  load the kernel's simulated GPIO chip driver (gpio-sim,
#                          with configfs) before the commands, as section `modules`;
#                          built for the booted kernel by gpio-sim-module.sh (cached
#                          beside the kernel) when the kernel does not ship it
#
# The guest always runs two extra sections first: `uname` (uname -a) and
# `realtime` (/sys/kernel/realtime, "absent" when the file does not exist),
# so the harness itself can be checked without rtgauge.
#
# Kernels: the metapackage (linux-image-rt-amd64, linux-image-amd64) is resolved
# with apt-cache to the image package it pins (linux-image-6.x-…), which
# `apt-get download` fetches into $RTGAUGE_QEMU_CACHE/debs; /boot is extracted
# into $RTGAUGE_QEMU_CACHE/kernels/PACKAGE_VERSION with the decompressed vmlinux.
# A new Debian kernel version is downloaded once; otherwise nothing is fetched.
# No modules are needed: the guest runs from the initramfs only.
#
# Packages: each one in RTGAUGE_QEMU_PACKAGES and those of its direct Depends
# that the host does not have installed (rtla: libtracefs1, libtraceevent1) are
# fetched with `apt-get download` into $RTGAUGE_QEMU_CACHE/debs (once per
# version) and extracted into $RTGAUGE_QEMU_CACHE/packages/PACKAGE_VERSION.
# Their /usr/bin executables and /usr/lib libraries are copied into the guest;
# the libraries they need beyond those (libc) come from the host, as ldd finds
# them. A library neither provides stops the script with its name.
#
# Exit status: 0 when the guest ran every command and reached the end of its
# script (whatever the commands' own exit statuses, see NAME.rc); non-zero
# when the kernel could not be fetched, the guest did not finish in time, or
# the console showed a kernel panic.
set -euo pipefail

die() { echo "run-guest.sh: $*" >&2; exit 1; }
log() { echo "run-guest.sh: $*" >&2; }
# The cached .deb of PACKAGE at exactly VERSION, or nothing.
cached_deb() { # PACKAGE VERSION
  local f
  for f in "$cache/debs/${1}_"*"_amd64.deb"; do
    [[ -f $f && $(dpkg-deb -f "$f" Version) == "$2" ]] && { echo "$f"; return; }
  done
  return 0
}

[[ $# -eq 3 ]] || die "usage: $0 KERNEL_FLAVOUR RTGAUGE_BIN OUTDIR"
flavour=$1
bin=$2
outdir=$3

[[ -f $bin && -x $bin ]] || die "not an executable file: $bin"
for tool in qemu-system-x86_64 apt-get apt-cache dpkg-deb tar cpio gzip ldd objcopy timeout flock awk od; do
  command -v "$tool" >/dev/null || die "missing tool: $tool"
done

busybox=""
for candidate in /bin/busybox /usr/bin/busybox; do
  if [[ -x $candidate ]] && ! ldd "$candidate" >/dev/null 2>&1; then
    busybox=$candidate   # ldd fails on static binaries: that is what we need
    break
  fi
done
[[ -n $busybox ]] || die "need a statically linked busybox (Debian package busybox-static)"

case $flavour in
  rt) meta=linux-image-rt-amd64 ;;
  vanilla | amd64) meta=linux-image-amd64 ;;
  linux-image-*) meta=$flavour ;;
  *) die "unknown kernel flavour '$flavour' (rt, vanilla or linux-image-*)" ;;
esac

cache=${RTGAUGE_QEMU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rtgauge-qemu}
timeout_s=${RTGAUGE_QEMU_TIMEOUT:-240}
smp=${RTGAUGE_QEMU_SMP:-2}
mem=${RTGAUGE_QEMU_MEM:-1024}
mkdir -p "$cache/debs" "$cache/kernels" "$outdir"
outdir=$(cd "$outdir" && pwd)
rm -f "$outdir"/*.out "$outdir"/*.err "$outdir"/*.rc "$outdir"/*.b64 "$outdir"/doctor.json \
  "$outdir"/result.json "$outdir"/console.log "$outdir"/data.log "$outdir"/kernel.env

# ---------------------------------------------------------------- kernel ----
# Resolve the metapackage to the real image package (linux-image-6.x-…) and
# the exact version it pins, with one apt-cache call (they are slow).
resolve_pkg() {
  apt-cache show --no-all-versions "$1" 2>/dev/null | awk '
    /^Package: / { p = $2 } /^Version: / { v = $2 }
    /^Depends: / && !dep {
      n = split(substr($0, 10), alts, /[,|]/)
      for (i = 1; i <= n; i++)
        if (match(alts[i], /linux-image-[0-9][^ ]* \(= [^)]+\)/)) {
          s = substr(alts[i], RSTART, RLENGTH); sub(/ \(= /, " ", s); sub(/\)$/, "", s)
          dep = s; break
        }
    }
    END {
      if (dep != "") print dep
      else if (p ~ /^linux-image-[0-9]/) print p, v
    }'
}

pkg="" version=""
if [[ ${RTGAUGE_QEMU_OFFLINE:-0} != 1 ]]; then
  read -r pkg version < <(resolve_pkg "$meta") || true
  if [[ -z $pkg && $(id -u) -eq 0 ]]; then
    log "apt does not know $meta; running apt-get update"
    apt-get update -qq >&2 || log "apt-get update failed"
    read -r pkg version < <(resolve_pkg "$meta") || true
  fi
fi
if [[ -z $pkg || -z $version ]]; then
  # Offline or apt without lists: newest cached extraction of this flavour.
  suffix=${meta#linux-image-}
  [[ $suffix == amd64 ]] && pat='linux-image-[0-9]*-amd64_*' || pat="linux-image-[0-9]*-${suffix}_*"
  [[ $suffix == amd64 ]] && notpat='*-rt-amd64_*' || notpat='no-such-name'
  newest=$(for d in "$cache"/kernels/$pat; do
    [[ -f $d/vmlinuz && $d != $notpat ]] && echo "$d"; done | sort -V | tail -n1 || true)
  [[ -n $newest ]] || die "cannot resolve $meta with apt and nothing cached in $cache/kernels"
  base=$(basename "$newest")
  pkg=${base%%_*} version=${base#*_}
  log "apt unavailable; using cached $pkg $version"
fi

# The bzImage decompresses itself (xz) in emulated code, which costs ~10 s per
# boot under TCG. QEMU boots an uncompressed ELF vmlinux directly through its
# PVH entry point, so the payload is decompressed once, on the host, and cached.
extract_vmlinux() { # KDIR
  local k=$1 comp magic tool off
  grep -q '^CONFIG_PVH=y' "$k/config" 2>/dev/null || return 1
  comp=$(sed -n 's/^CONFIG_KERNEL_\(XZ\|ZSTD\|GZIP\|LZMA\|LZ4\|LZO\|BZIP2\)=y$/\1/p' "$k/config" | head -n1)
  case $comp in
    XZ) magic=$'\xfd7zXZ' tool="xz -dc" ;;
    ZSTD) magic=$'\x28\xb5\x2f\xfd' tool="zstd -dcq" ;;
    GZIP) magic=$'\x1f\x8b\x08' tool="gzip -dc" ;;
    *) return 1 ;;
  esac
  command -v "${tool%% *}" >/dev/null || return 1
  for off in $(LC_ALL=C grep -abo "$magic" "$k/vmlinuz" | cut -d: -f1 | head -n 4); do
    tail -c +$((off + 1)) "$k/vmlinuz" | $tool >"$k/vmlinux.tmp" 2>/dev/null || true
    if [[ $(head -c 4 "$k/vmlinux.tmp" | od -An -tx1 | tr -d ' ') == 7f454c46 ]]; then
      mv "$k/vmlinux.tmp" "$k/vmlinux"
      return 0
    fi
  done
  rm -f "$k/vmlinux.tmp"
  return 1
}

kdir="$cache/kernels/${pkg}_${version}"
(
  flock 9
  if [[ ! -f $kdir/vmlinuz ]]; then
    debdir="$cache/debs"
    deb=$(cached_deb "$pkg" "$version")
    if [[ -z $deb ]]; then
      log "downloading $pkg $version"
      t0=$(date +%s)
      (cd "$debdir" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "$pkg=$version" >&2) ||
        die "apt-get download $pkg=$version failed"
      deb=$(cached_deb "$pkg" "$version")
      [[ -n $deb ]] || die "apt-get download produced no .deb for $pkg $version"
      log "downloaded $(basename "$deb") in $(($(date +%s) - t0)) s"
    fi
    log "extracting $(basename "$deb")"
    tmp=$(mktemp -d "$cache/kernels/.extract.XXXXXX")
    # Only /boot is needed: the guest runs from the initramfs and the Debian
    # configs build in everything it uses (8250 serial, devtmpfs, tmpfs,
    # gzip initramfs), so no modules are extracted.
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" --wildcards './boot/*'
    mkdir -p "$tmp/k"
    cp "$tmp"/boot/vmlinuz-* "$tmp/k/vmlinuz"
    cp "$tmp"/boot/config-* "$tmp/k/config" 2>/dev/null || true
    cp "$tmp"/boot/System.map-* "$tmp/k/System.map" 2>/dev/null || true
    printf 'package=%s\nversion=%s\ndeb=%s\n' "$pkg" "$version" "$(basename "$deb")" >"$tmp/k/kernel.env"
    extract_vmlinux "$tmp/k" || log "no PVH-bootable vmlinux could be extracted; booting the bzImage"
    rm -rf "$kdir"
    mv "$tmp/k" "$kdir"
    rm -rf "$tmp"
  fi
) 9>"$cache/kernels/.lock-$pkg"
[[ -f $kdir/vmlinuz ]] || die "kernel extraction failed: $kdir"
cp "$kdir/kernel.env" "$outdir/kernel.env"
echo "flavour=$flavour" >>"$outdir/kernel.env"
log "kernel: $pkg $version"

if [[ -f $kdir/config ]]; then
  for opt in CONFIG_BLK_DEV_INITRD CONFIG_RD_GZIP CONFIG_DEVTMPFS CONFIG_TMPFS CONFIG_SERIAL_8250_CONSOLE; do
    grep -q "^$opt=y" "$kdir/config" || log "warning: $opt is not built in ($pkg); the guest may not boot"
  done
fi

modules=()
if [[ ${RTGAUGE_QEMU_GPIO_SIM:-0} == 1 ]]; then
  image_deb=$(cached_deb "$pkg" "$version")
  [[ -n $image_deb ]] || die "RTGAUGE_QEMU_GPIO_SIM: the .deb of $pkg $version is not in $cache/debs"
  # Captured first: a failing build stops the script here (a process substitution's would not).
  module_list=$(flock "$cache/kernels/.lock-$pkg" bash "$(dirname "$0")/gpio-sim-module.sh" \
    "$pkg" "$version" "$image_deb" "$kdir/gpio-sim") || die "no gpio-sim module for $pkg $version"
  mapfile -t modules <<<"$module_list"
  log "modules: ${modules[*]##*/}"
fi

# ------------------------------------------------------------- initramfs ----
work=$(mktemp -d "${TMPDIR:-/tmp}/rtgauge-qemu.XXXXXX")
if [[ ${RTGAUGE_QEMU_KEEP:-0} == 1 ]]; then log "keeping $work"; else trap 'rm -rf "$work"' EXIT; fi
root=$work/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,root,etc,run,rtgauge-guest}
cp "$busybox" "$root/bin/busybox"

# Copies an executable into the guest's /usr/bin with the shared libraries and
# the dynamic loader ldd finds for it, at the paths ldd reports. Debug info is
# stripped (debug builds are large; the guest only runs them).
add_binary() { # HOST_PATH GUEST_NAME
  local src=$1 dest=$root/usr/bin/$2 ldd_out lib
  objcopy --strip-debug "$src" "$dest" 2>/dev/null || cp "$src" "$dest"
  chmod 755 "$dest"
  ldd_out=$(ldd "$src" 2>/dev/null) || return 0 # static binary or script
  while read -r lib; do
    [[ -n $lib && -e $lib && ! -e $root$lib ]] || continue
    [[ $lib == "$cache"/* ]] && continue # a package's library, already in the guest's /usr/lib
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done < <(echo "$ldd_out" | awk '
    $2 == "=>" && $3 ~ /^\// { print $3; next }   # libfoo.so => /path (0x...)
    $1 ~ /^\// { print $1 }                       # /lib64/ld-linux-x86-64.so.2 (0x...)
  ')
}
add_binary "$bin" rtgauge
for extra in ${RTGAUGE_QEMU_EXTRA:-}; do
  [[ -f $extra && -x $extra ]] || die "RTGAUGE_QEMU_EXTRA: not an executable file: $extra"
  add_binary "$extra" "$(basename "$extra")"
done

# Debian packages for the guest (see "Packages" in the header).
fetch_package() { # PACKAGE -> prints the extraction directory
  local pkg=$1 version="" deb dir
  if [[ ${RTGAUGE_QEMU_OFFLINE:-0} != 1 ]]; then
    version=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2 }')
    [[ $version == "(none)" ]] && version=""
  fi
  if [[ -n $version ]]; then
    dir="$cache/packages/${pkg}_${version//:/%3a}" # no ':' (epoch): the path goes into LD_LIBRARY_PATH
  else # offline: the newest cached extraction
    dir=$(ls -d "$cache/packages/${pkg}_"* 2>/dev/null | sort -V | tail -n1 || true)
    [[ -n $dir ]] || die "package $pkg: apt does not know it and nothing is cached in $cache/packages"
  fi
  (
    flock 9
    [[ -d $dir ]] && exit 0
    deb=$(cached_deb "$pkg" "$version")
    if [[ -z $deb ]]; then
      log "downloading $pkg $version"
      (cd "$cache/debs" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "$pkg=$version" >&2) ||
        die "apt-get download $pkg=$version failed"
      deb=$(cached_deb "$pkg" "$version")
    fi
    tmp=$(mktemp -d "$cache/packages/.extract.XXXXXX")
    dpkg-deb -x "$deb" "$tmp"
    mv "$tmp" "$dir"
  ) 9>"$cache/packages/.lock-$pkg" || exit 1
  echo "$dir"
}
# Direct Depends of a package (first alternative, no version) not installed on the host.
missing_depends() { # EXTRACTION_DIR
  local control
  control=$(ls "$cache/debs/$(basename "$1" | sed 's/_.*//')_"*.deb 2>/dev/null | head -n1)
  [[ -n $control ]] || return 0
  dpkg-deb -f "$control" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/:any//; s/ //g' |
    while read -r dep; do
      [[ -n $dep ]] || continue
      dpkg-query -W -f='${Status}' "$dep" 2>/dev/null | grep -q 'install ok installed' || echo "$dep"
    done
}
if [[ -n ${RTGAUGE_QEMU_PACKAGES:-} ]]; then
  mkdir -p "$cache/packages"
  pkg_dirs=()
  for p in $RTGAUGE_QEMU_PACKAGES; do
    d=$(fetch_package "$p") || exit 1
    pkg_dirs+=("$d")
    for dep in $(missing_depends "$d"); do
      d=$(fetch_package "$dep") || exit 1
      pkg_dirs+=("$d")
    done
  done
  pkg_libs=""
  for d in "${pkg_dirs[@]}"; do
    [[ -d $d/usr/lib ]] || continue
    mkdir -p "$root/usr/lib"
    cp -a "$d/usr/lib/." "$root/usr/lib/"
    pkg_libs+=$(find "$d/usr/lib" -name '*.so*' -printf '%h:' | tr -s ':')
  done
  for d in "${pkg_dirs[@]}"; do
    for exe in "$d"/usr/bin/* "$d"/usr/sbin/*; do
      [[ -f $exe && -x $exe && ! -L $exe ]] || continue
      missing=$(LD_LIBRARY_PATH=$pkg_libs ldd "$exe" 2>/dev/null | awk '/not found/ { print $1 }' | tr '\n' ' ')
      [[ -z $missing ]] || die "$(basename "$exe") needs libraries no package provides: $missing(add the package to RTGAUGE_QEMU_PACKAGES)"
      # The packages' own libraries are already in place; ldd adds the host's (libc, loader).
      LD_LIBRARY_PATH=$pkg_libs add_binary "$exe" "$(basename "$exe")"
      log "package $(basename "$d"): /usr/bin/$(basename "$exe")"
    done
  done
fi
if [[ ${#modules[@]} -gt 0 ]]; then
  mkdir -p "$root/lib/modules/rtgauge"
  for m in "${modules[@]}"; do
    cp "$m" "$root/lib/modules/rtgauge/"
    echo "/lib/modules/rtgauge/$(basename "$m")" >>"$root/rtgauge-guest/modules"
  done
fi
echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"

echo "CMD_TIMEOUT=${RTGAUGE_QEMU_CMD_TIMEOUT:-120}" >"$root/rtgauge-guest/settings"
if [[ -n ${RTGAUGE_QEMU_CMDS:-} ]]; then
  [[ -f $RTGAUGE_QEMU_CMDS ]] || die "RTGAUGE_QEMU_CMDS is not a file: $RTGAUGE_QEMU_CMDS"
  cp "$RTGAUGE_QEMU_CMDS" "$root/rtgauge-guest/commands"
else
  cat >"$root/rtgauge-guest/commands" <<'EOF'
doctor rtgauge doctor --json
run rtgauge run cyclic --duration 2s --period 1ms -o /tmp/r.json --best-effort -q
result cat /tmp/r.json
EOF
fi
if grep -Ev '^[[:space:]]*(#|$)' "$root/rtgauge-guest/commands" | grep -Evq '^[A-Za-z0-9_-]+[[:space:]]+[^[:space:]]'; then
  die "malformed guest command line (want 'NAME command...')"
fi

cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/bin:/usr/sbin:/bin:/sbin HOME=/root TERM=dumb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# Keep kernel messages off the console while commands print.
echo 1 >/proc/sys/kernel/printk
cd /root

# Each section goes gzip+base64-encoded to the data channel: the second serial
# port when QEMU provides one (no kernel message can interleave there), else
# the console. Serial ports are slow under emulation (a 100 kB result takes
# minutes at the default 9600 baud), hence 115200 baud and compression.
# The console also gets a readable copy, cut after 2 kB.
data=/dev/ttyS0
if [ -c /dev/ttyS1 ] && stty -F /dev/ttyS1 115200 raw -echo 2>/dev/null; then data=/dev/ttyS1; fi
section() { # NAME FILE RC
  {
    printf '===RTGAUGE-%s-BEGIN gzip-base64===\n' "$1"
    gzip -c "$2" | base64
    printf '===RTGAUGE-%s-END rc=%s===\n' "$1" "$3"
  } >"$data"
  size=$(wc -c <"$2")
  if [ "$size" -gt 0 ] || [ "$3" != 0 ]; then
    printf -- '--- %s (rc=%s, %s bytes, uptime %s s) ---\n' "$1" "$3" "$size" "$(cut -d' ' -f1 /proc/uptime)"
    head -c 2048 "$2"
    if [ "$size" -gt 2048 ]; then printf '\n... (cut; full output in %s on the host)\n' "$1"
    elif [ "$size" -gt 0 ] && [ -n "$(tail -c1 "$2")" ]; then echo; fi
  fi
}
run() { # NAME COMMAND
  name=$1; shift
  timeout "$CMD_TIMEOUT" sh -c "$*" >/tmp/.out 2>/tmp/.err </dev/null
  rc=$?
  section "$name" /tmp/.out $rc
  section "$name.stderr" /tmp/.err $rc
}
. /rtgauge-guest/settings

echo '===RTGAUGE-GUEST-START===' | tee "$data"
echo "--- guest up after $(cut -d' ' -f1 /proc/uptime) s ---"
run uname 'uname -a'
run realtime 'cat /sys/kernel/realtime 2>/dev/null || echo absent'
if [ -f /rtgauge-guest/modules ]; then
  run modules 'while read -r m; do insmod "$m" && echo "loaded $m" || exit 1; done </rtgauge-guest/modules'
fi
grep -Ev '^[[:space:]]*(#|$)' /rtgauge-guest/commands >/tmp/.commands
while read -r name cmd; do
  run "$name" "$cmd"
done </tmp/.commands
echo '===RTGAUGE-GUEST-DONE===' | tee "$data"
echo "--- guest done after $(cut -d' ' -f1 /proc/uptime) s ---"
sync
poweroff -f
EOF
chmod 755 "$root/init"

initrd=$work/initrd.gz
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --owner=0:0 --quiet | gzip -1 >"$initrd")
log "initramfs: $(du -h "$initrd" | cut -f1)"

# ------------------------------------------------------------------ boot ----
kernel_image=$kdir/vmlinuz
if [[ -f $kdir/vmlinux && ${RTGAUGE_QEMU_BZIMAGE:-0} != 1 ]]; then kernel_image=$kdir/vmlinux; fi
accel=(-accel tcg)
log "prepared in ${SECONDS} s; booting $pkg ($(basename "$kernel_image")) under qemu (tcg, ${smp} CPUs, ${mem} MiB, limit ${timeout_s} s)"
t0=$(date +%s)
set +e
timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 "${accel[@]}" \
  -m "$mem" -smp "$smp" -nographic -no-reboot -monitor none -nic none \
  -serial stdio -serial "file:$outdir/data.log" \
  -kernel "$kernel_image" -initrd "$initrd" \
  -append "console=ttyS0,115200 quiet panic=-1 ${RTGAUGE_QEMU_APPEND:-}" \
  </dev/null >"$outdir/console.log" 2>"$outdir/qemu.err"
qrc=$?
set -e
elapsed=$(($(date +%s) - t0))
echo "boot_seconds=$elapsed" >>"$outdir/kernel.env"

# Decode the sections from the data channel (or the console when the second
# port was not usable) into NAME.out / NAME.err / NAME.rc.
src=$outdir/data.log
grep -q '===RTGAUGE-GUEST-START===' "$src" 2>/dev/null || src=$outdir/console.log
awk -v dir="$outdir" '
  { sub(/\r$/, "") }
  /^===RTGAUGE-[A-Za-z0-9_.-]+-BEGIN gzip-base64===$/ {
    name = substr($0, 12, length($0) - 11 - 21)
    file = dir "/" name ".b64"; printf "" > file; inside = 1; next
  }
  inside && /^===RTGAUGE-[A-Za-z0-9_.-]+-END rc=[0-9]+===$/ {
    close(file); inside = 0
    rc = $0; sub(/.*rc=/, "", rc); sub(/===$/, "", rc)
    print rc > (dir "/" name ".rc"); close(dir "/" name ".rc")
    next
  }
  inside { print >> file }
' "$src"
for b64 in "$outdir"/*.b64; do
  [[ -e $b64 ]] || continue
  name=$(basename "$b64" .b64)
  case $name in
    *.stderr) dest=$outdir/${name%.stderr}.err; rm -f "$outdir/$name.rc" ;;
    *) dest=$outdir/$name.out ;;
  esac
  base64 -d "$b64" | gzip -dc >"$dest" || log "warning: section $name is damaged"
  rm -f "$b64"
done
[[ -f $outdir/doctor.out ]] && cp "$outdir/doctor.out" "$outdir/doctor.json"
[[ -f $outdir/result.out ]] && cp "$outdir/result.out" "$outdir/result.json"

if grep -q 'Kernel panic - not syncing' "$outdir/console.log"; then
  tail -n 40 "$outdir/console.log" >&2
  die "guest kernel panicked after ${elapsed} s (see $outdir/console.log)"
fi
if ! grep -q '===RTGAUGE-GUEST-DONE===' "$src"; then
  tail -n 40 "$outdir/console.log" >&2
  [[ $qrc -eq 124 || $qrc -eq 137 ]] && die "guest did not finish within ${timeout_s} s (see $outdir/console.log)"
  die "guest stopped before the end of its script (qemu exit $qrc, see $outdir/console.log, $outdir/qemu.err)"
fi
log "guest finished in ${elapsed} s; output in $outdir"

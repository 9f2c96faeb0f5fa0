#!/usr/bin/env bash
# Gives the kernel modules that make a simulated GPIO chip (the kernel's gpio-sim) in a guest
# booted by run-guest.sh, for one Debian kernel image package: prints their host paths, one per
# line, in the order to load them (configfs first when the kernel builds it as a module).
#
# usage: gpio-sim-module.sh IMAGE_PACKAGE VERSION IMAGE_DEB OUTDIR
#
#   IMAGE_PACKAGE  e.g. linux-image-6.1.0-56-rt-amd64
#   VERSION        its Debian version, e.g. 6.1.192-2
#   IMAGE_DEB      the image package's .deb (for its own modules: configfs, gpio-sim)
#   OUTDIR         where the modules are kept (a cache: reused when already built)
#
# Debian's kernels do not build gpio-sim (CONFIG_GPIO_SIM), nor the interrupt simulator it
# needs (CONFIG_IRQ_SIM, a bool that only gpio-sim and gpio-mockup select). When the image
# ships gpio-sim, its own module is used. Otherwise gpio-sim is built out of tree, with the
# interrupt simulator linked into the same module, from the sources of the same Debian version
# (linux-source-X.Y: drivers/gpio/gpio-sim.c, drivers/gpio/gpiolib.h, kernel/irq/irq_sim.c)
# against its headers (linux-headers-ABI-FLAVOUR, -common-FLAVOUR and linux-kbuild-X.Y), all
# fetched with `apt-get download` into OUTDIR and extracted there; nothing is installed on the
# host. It needs make and the compiler the headers name (gcc-12 for Debian 12's 6.1).
#
# One change to the kernel's source: irq_sim.c calls irq_to_desc(), which the kernel does not
# export to modules; generic_handle_irq() (exported) does the same for the descriptor's
# handler, handle_simple_irq, which irq_sim sets on every interrupt it maps.
set -euo pipefail

die() { echo "gpio-sim-module.sh: $*" >&2; exit 1; }
log() { echo "gpio-sim-module.sh: $*" >&2; }

[[ $# -eq 4 ]] || die "usage: $0 IMAGE_PACKAGE VERSION IMAGE_DEB OUTDIR"
image=$1 version=$2 image_deb=$3 out=$4
abi_flavour=${image#linux-image-}   # 6.1.0-56-rt-amd64
kver=$abi_flavour                   # /lib/modules/<kver>
series=$(echo "$version" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')  # 6.1
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The image's own modules: configfs (gpio-sim is configured through it) and, if built, gpio-sim.
modules_of_image() {
  [[ -f $out/image.list ]] || dpkg-deb -c "$image_deb" | awk '{ print $6 }' >"$out/image.list"
}
extract_module() { # PATH_IN_DEB -> prints the host path of the (decompressed) module
  local rel=$1 name dest
  name=$(basename "$rel")
  name=${name%.xz}
  name=${name%.zst}
  dest=$out/$name
  if [[ ! -f $dest ]]; then
    case $rel in
      *.xz) dpkg-deb --fsys-tarfile "$image_deb" | tar -xO "$rel" | xz -dc >"$dest.tmp" ;;
      *.zst) dpkg-deb --fsys-tarfile "$image_deb" | tar -xO "$rel" | zstd -dcq >"$dest.tmp" ;;
      *) dpkg-deb --fsys-tarfile "$image_deb" | tar -xO "$rel" >"$dest.tmp" ;;
    esac
    mv "$dest.tmp" "$dest"
  fi
  echo "$dest"
}
modules_of_image
configfs=$(grep -E '/kernel/fs/configfs/configfs\.ko(\.xz|\.zst)?$' "$out/image.list" || true)
own_sim=$(grep -E '/kernel/drivers/gpio/gpio-sim\.ko(\.xz|\.zst)?$' "$out/image.list" || true)
[[ -n $configfs ]] && extract_module "$configfs"
if [[ -n $own_sim ]]; then
  extract_module "$own_sim"
  exit 0
fi

built=$out/gpio-sim.ko
if [[ ! -f $built ]]; then
  for tool in make gcc apt-get dpkg-deb tar xz; do
    command -v "$tool" >/dev/null || die "missing tool: $tool"
  done
  debs=$out/debs
  mkdir -p "$debs"
  fetch() { # PACKAGE -> prints the .deb
    local f
    f=$(ls "$debs/${1}_"*.deb 2>/dev/null | head -n1 || true)
    if [[ -z $f ]]; then
      (cd "$debs" && apt-get download -q -o APT::Sandbox::User="$(id -un)" "$1=$version" >&2) ||
        die "apt-get download $1=$version failed"
      f=$(ls "$debs/${1}_"*.deb | head -n1)
    fi
    echo "$f"
  }
  t0=$(date +%s)
  headers=$(fetch "linux-headers-$abi_flavour")
  common=$(dpkg-deb -f "$headers" Depends | tr ',' '\n' | sed -n 's/^ *\(linux-headers-[^ ]*-common[^ ]*\).*/\1/p' | head -n1)
  [[ -n $common ]] || die "$(basename "$headers") names no -common headers package"
  sysroot=$out/sysroot
  rm -rf "$sysroot"
  mkdir -p "$sysroot"
  for deb in "$headers" "$(fetch "$common")" "$(fetch "linux-kbuild-$series")"; do
    dpkg-deb -x "$deb" "$sysroot"
  done
  kbuild=$sysroot/usr/src/linux-headers-$abi_flavour
  # The flavour's Makefile includes the common one by its installed path.
  sed -i "s#^include /usr/src/#include $sysroot/usr/src/#" "$kbuild/Makefile"

  src=$out/src
  rm -rf "$src"
  mkdir -p "$src"
  source_deb=$(fetch "linux-source-$series")
  dpkg-deb --fsys-tarfile "$source_deb" | tar -xO "./usr/src/linux-source-$series.tar.xz" |
    tar -xJ -C "$src" --strip-components=1 \
      "linux-source-$series/drivers/gpio/gpio-sim.c" \
      "linux-source-$series/drivers/gpio/gpiolib.h" \
      "linux-source-$series/kernel/irq/irq_sim.c"
  rm -f "$source_deb" # 140 MB; only three files were needed

  mod=$out/build
  rm -rf "$mod"
  mkdir -p "$mod"
  cp "$src/drivers/gpio/gpio-sim.c" "$mod/gpio-sim-main.c"
  cp "$src/drivers/gpio/gpiolib.h" "$src/kernel/irq/irq_sim.c" "$mod/"
  sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$mod/irq_sim.c"
  grep -q 'generic_handle_irq(irqnum);' "$mod/irq_sim.c" ||
    die "irq_sim.c of $version does not have the call this script replaces (irq_to_desc is not exported)"
  printf 'obj-m := gpio-sim.o\ngpio-sim-y := gpio-sim-main.o irq_sim.o\n' >"$mod/Kbuild"
  make -s -C "$kbuild" M="$mod" modules >"$out/build.log" 2>&1 ||
    { tail -n 20 "$out/build.log" >&2; die "building gpio-sim for $image $version failed (log: $out/build.log)"; }
  cp "$mod/gpio-sim.ko" "$built"
  rm -rf "$sysroot" "$src" "$mod" "$debs"
  log "built gpio-sim.ko for $kver in $(($(date +%s) - t0)) s"
fi
echo "$built"

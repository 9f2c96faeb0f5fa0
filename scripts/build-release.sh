#!/usr/bin/env bash
# Builds rtgauge's static release binaries and tarballs (docs/targets.md).
#
#   scripts/build-release.sh [--install] [--arch x86_64,aarch64] [--flavour full,small] [--out DIR]
#                            [--only BUILD,…] [--deb] [--emulated-tests] [--deny-warnings]
#
# For each architecture and flavour it writes a statically linked, stripped binary and
#   DIR/rtgauge-VERSION-ARCH-linux[-small].tar.gz
# holding the binary, the man pages, bash/zsh/fish completions, the guides, the README and the
# licences. `full` is the default feature set; `small` is the target build (no network client
# for `submit squad`, no Parquet export, SVG-only images, the JSON Schema embedded, not
# generated). DIR/sizes.tsv lists each build's binary size in bytes (README's table is checked
# against it). The binaries are also left as
# DIR/ARCH[-small]/rtgauge for the tests. --only builds just the builds named that way
# (`x86_64,aarch64-small`: one per architecture and flavour, as CI does).
# --deb also packages each full build as DIR/rtgauge_VERSION-1_DEBARCH.deb (dpkg-deb; the
# binary is static, so the package depends on nothing). --emulated-tests runs the unit tests of
# the architecture-specific code (rtgauge-core) and the doctor's fixture tests
# (rtgauge-sysinfo) built for each foreign architecture, under qemu-user. --deny-warnings fails
# the build on any compiler warning in rtgauge's own crates (CI: code that only another
# architecture compiles is not seen by the host's clippy).
#
# Rustup cannot fetch other targets here, so the build uses Debian's Rust (rustc-web: the
# compiler plus the arm64 standard library as a multiarch package), the aarch64 GNU linker and
# glibc linked statically (-C target-feature=+crt-static). qemu-user runs the aarch64 binary
# on an x86-64 host to generate its completions (and in the tests). --install sets all of that
# up with apt-get (Debian 12; root or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

arches="x86_64,aarch64"
flavours="full,small"
out="target/release-static/dist"
install=0
deb=0
emulated_tests=0
deny_warnings=""
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) arches="$2"; shift 2 ;;
    --flavour) flavours="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --only) only=",$2,"; shift 2 ;;
    --install) install=1; shift ;;
    --deb) deb=1; shift ;;
    --deny-warnings) deny_warnings=" -D warnings"; shift ;;
    --emulated-tests) emulated_tests=1; shift ;;
    -h|--help) sed -n '2,25s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "build-release.sh: unknown option '$1' (see --help)" >&2; exit 1 ;;
  esac
done

# Debian's toolchain lives in /usr/bin; rustup's proxies usually come first on PATH and have no
# other targets, so both programs are named explicitly.
CARGO="${RELEASE_CARGO:-/usr/bin/cargo}"
export RUSTC="${RELEASE_RUSTC:-/usr/bin/rustc}"
# Each architecture's GNU toolchain prefix and the qemu-user program that runs its binaries.
gnu_prefix() { case "$1" in x86_64) echo x86_64-linux-gnu ;; aarch64) echo aarch64-linux-gnu ;; esac; }
debian_arch() { case "$1" in x86_64) echo amd64 ;; aarch64) echo arm64 ;; esac; }

if [ "$install" -eq 1 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  pkgs=(rustc-web cargo-web qemu-user file)
  for arch in ${arches//,/ }; do
    case "$arch" in
      x86_64) pkgs+=(libstd-rust-web-dev) ;;
      aarch64)
        $SUDO dpkg --add-architecture arm64
        pkgs+=(libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross) ;;
    esac
  done
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi

for tool in "$CARGO" "$RUSTC"; do
  [ -x "$tool" ] || { echo "build-release.sh: $tool not found: install Debian's Rust with --install (or set RELEASE_CARGO/RELEASE_RUSTC)" >&2; exit 1; }
done

# Lays out the Debian package of one architecture's full build from its tarball stage (so the
# package and the tarball cannot differ) and builds it with dpkg-deb, which every Debian host
# has: cargo-deb would cost CI minutes of compiling a tool to write one control file.
debian_package() {
  local arch=$1 stage=$2 debarch root doc deb
  debarch=$(debian_arch "$arch")
  root="$target_dir/deb/$debarch"
  doc="$root/usr/share/doc/rtgauge"
  rm -rf "$root" && mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" \
    "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d" "$doc/licences"
  install -m 755 "$stage/rtgauge" "$root/usr/bin/rtgauge"
  # Debian compresses man pages; -n keeps the package reproducible (no name or time stamp).
  for page in "$stage"/man/man1/*.1; do gzip -9n < "$page" > "$root/usr/share/man/man1/$(basename "$page").gz"; done
  install -m 644 "$stage/completions/rtgauge.bash" "$root/usr/share/bash-completion/completions/rtgauge"
  install -m 644 "$stage/completions/_rtgauge" "$root/usr/share/zsh/vendor-completions/_rtgauge"
  install -m 644 "$stage/completions/rtgauge.fish" "$root/usr/share/fish/vendor_completions.d/rtgauge.fish"
  install -m 644 "$stage/README.md" "$stage"/doc/*.md "$doc/"
  install -m 644 "$stage"/licences/* "$doc/licences/"
  { printf 'rtgauge is dual-licensed under the MIT licence or the Apache License 2.0, at your option.\n\n'
    cat "$stage/LICENSE-MIT"; printf '\n'; cat "$stage/LICENSE-APACHE"; } > "$doc/copyright"
  chmod -R u=rwX,go=rX "$root"
  # The binary is static: the package depends on nothing, not even libc6.
  cat > "$root/DEBIAN/control" <<CONTROL
Package: rtgauge
Version: $version-1
Architecture: $debarch
Maintainer: The rtgauge authors <rtgauge@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Section: utils
Priority: optional
Description: $(sed -n 's/^description = "\(.*\)"/\1/p' crates/rtgauge/Cargo.toml)
 rtgauge measures how late periodic tasks wake up, how fast the system answers
 an event, what context switches, IPC calls and memory allocation cost in the
 worst case, and how all of it degrades under load; it writes a versioned JSON
 result, renders tables and an HTML report, compares runs and checks them
 against limits. The binary is statically linked.
CONTROL
  deb="$out/rtgauge_${version}-1_$debarch.deb"
  dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
  printf '%s\t%s bytes\n' "$deb" "$(stat -c %s "$deb")"
}

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
target_dir="target/release-static"
mkdir -p "$out"
host=$(uname -m)

for arch in ${arches//,/ }; do
  prefix=$(gnu_prefix "$arch")
  [ -n "$prefix" ] || { echo "build-release.sh: unknown architecture '$arch' (x86_64 or aarch64)" >&2; exit 1; }
  triple="$arch-unknown-linux-gnu"
  [ -d "$("$RUSTC" --print sysroot)/lib/rustlib/$triple" ] || {
    echo "build-release.sh: no Rust standard library for $triple: install libstd-rust-web-dev:$(debian_arch "$arch") (or run with --install)" >&2
    exit 1
  }
  linker_var="CARGO_TARGET_$(echo "$triple" | tr 'a-z-' 'A-Z_')_LINKER"
  if [ "$arch" != "$host" ]; then export "$linker_var=$prefix-gcc"; fi
  if [ "$arch" = "$host" ]; then
    run=()
  else
    run=("qemu-$arch")
    # Static test binaries need no target libraries under qemu-user.
    export "CARGO_TARGET_$(echo "$triple" | tr 'a-z-' 'A-Z_')_RUNNER=qemu-$arch"
  fi
  # One set of flags for the release builds and the emulated tests, so the tests reuse the
  # release build's compiled dependencies. RUSTFLAGS reach only the target's crates because
  # --target is always given: build scripts and proc-macros still link dynamically for the
  # host. Not position-independent: a static PIE gains nothing for a measuring tool and
  # `file` would not call it "statically linked". No debug info, symbols stripped: the binary
  # is meant to be copied to small boards.
  # Dependencies' lints are capped by cargo, so --deny-warnings reaches rtgauge's crates only.
  export RUSTFLAGS="-C target-feature=+crt-static -C relocation-model=static$deny_warnings" \
    CARGO_PROFILE_RELEASE_DEBUG=0 \
    CARGO_PROFILE_RELEASE_STRIP=symbols \
    CARGO_PROFILE_RELEASE_SMALL_DEBUG=0 \
    CARGO_PROFILE_RELEASE_SMALL_STRIP=symbols

  for flavour in ${flavours//,/ }; do
    case "$flavour" in
      full) features=(); suffix=""; profile=release ;;
      # The small build's profile (Cargo.toml, release-small) optimises the code that does not
      # measure for size; the measuring crates keep the full build's optimisation.
      small) features=(--no-default-features); suffix="-small"; profile=release-small ;;
      *) echo "build-release.sh: unknown flavour '$flavour' (full or small)" >&2; exit 1 ;;
    esac
    if [ -n "$only" ] && [[ "$only" != *",$arch$suffix,"* ]]; then
      echo "== $arch $flavour: not in --only, skipped"
      continue
    fi
    echo "== $arch $flavour"
    # The flavours differ in features (the small build leaves out the network client — ureq,
    # rustls, ring —, Parquet and the images) and in profile, so each compiles its own tree;
    # CI builds one flavour per architecture, so nothing is compiled twice there.
    build_start=$SECONDS
    "$CARGO" build --profile "$profile" --locked -p rtgauge "${features[@]}" \
      --target "$triple" --target-dir "$target_dir"
    echo "== $arch $flavour built in $((SECONDS - build_start)) s"
    binary="$target_dir/$triple/$profile/rtgauge"
    if ! file "$binary" | grep -q "statically linked"; then
      echo "build-release.sh: $binary is not statically linked: $(file -b "$binary")" >&2
      exit 1
    fi

    name="rtgauge-$version-$arch-linux$suffix"
    stage="$target_dir/stage/$name"
    rm -rf "$stage" && mkdir -p "$stage/man/man1" "$stage/completions" "$stage/doc" "$stage/licences"
    install -m 755 "$binary" "$stage/rtgauge"
    # The pages are generated by this very binary, so they match its flags.
    "${run[@]}" "$binary" man "$stage/man/man1" >/dev/null
    for shell in bash zsh fish; do
      "${run[@]}" "$binary" completions "$shell" "$stage/completions" >/dev/null
    done
    cp README.md "$stage/"
    cp docs/*.md "$stage/doc/"
    cp LICENSE-MIT LICENSE-APACHE "$stage/"
    cp crates/rtgauge-report/assets/*.LICENSE "$stage/licences/"
    tar -C "$target_dir/stage" -czf "$out/$name.tar.gz" "$name"
    mkdir -p "$out/$arch$suffix"
    install -m 755 "$binary" "$out/$arch$suffix/rtgauge"
    if [ "$deb" -eq 1 ] && [ "$flavour" = full ]; then
      debian_package "$arch" "$stage"
    fi
    bytes=$(stat -c %s "$binary")
    printf '%s\t%s bytes\t%s\n' "$out/$name.tar.gz" "$bytes" "$(file -b "$binary" | cut -d, -f1-2)"
    # One line per build, replaced when the build is made again: README's size table is
    # checked against this file (tests/static_targets.rs).
    sizes="$out/sizes.tsv"
    touch "$sizes"
    { grep -v "^$arch$suffix	" "$sizes" || true; printf '%s\t%s\n' "$arch$suffix" "$bytes"; } > "$sizes.new"
    mv "$sizes.new" "$sizes"
  done

  if [ "$emulated_tests" -eq 1 ] && [ "$arch" != "$host" ]; then
    echo "== $arch unit tests under ${run[*]}"
    # The profile of the architecture's last build, so the tests reuse its dependencies.
    emulated_test() { "$CARGO" test --profile "$profile" --locked --target "$triple" --target-dir "$target_dir" "$@"; }
    emulated_test -p rtgauge-core --lib
    emulated_test -p rtgauge-sysinfo --lib --test doctor
  fi
done

#!/bin/sh
# Builds the image of Containerfile from a static rtgauge binary and Debian's busybox-static:
#   build-image.sh RTGAUGE_BINARY [TAG]        (TAG: rtgauge:latest)
# with buildah, else podman. Prints the image's tag.
set -eu
binary=${1:?usage: build-image.sh RTGAUGE_BINARY [TAG]}
tag=${2:-rtgauge:latest}
here=$(cd "$(dirname "$0")" && pwd)
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || { echo "build-image.sh: no busybox; apt-get install busybox-static" >&2; exit 1; }
if ldd "$busybox" >/dev/null 2>&1 || ldd "$binary" >/dev/null 2>&1; then
    echo "build-image.sh: $busybox and $binary must be static (busybox-static; scripts/build-release.sh)" >&2
    exit 1
fi
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/rootfs/bin" "$ctx/rootfs/tmp" "$ctx/rootfs/var/lib/rtgauge"
chmod 1777 "$ctx/rootfs/tmp"
cp "$busybox" "$ctx/rootfs/bin/busybox"
for applet in $("$busybox" --list); do
    [ "$applet" = busybox ] || ln -s busybox "$ctx/rootfs/bin/$applet"
done
cp "$binary" "$ctx/rtgauge"
if command -v buildah >/dev/null; then
    buildah build --quiet -f "$here/Containerfile" -t "$tag" "$ctx" >/dev/null
elif command -v podman >/dev/null; then
    podman build --quiet -f "$here/Containerfile" -t "$tag" "$ctx" >/dev/null
else
    echo "build-image.sh: neither buildah nor podman; apt-get install buildah" >&2
    exit 1
fi
echo "$tag"

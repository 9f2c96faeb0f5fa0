#!/bin/sh
# Installs SQUAD (PyPI, Django) into target/squad-venv for crates/rtgauge/tests/squad.rs.
#
# SQUAD's web front end downloads its JavaScript and CSS from CDNs and GitHub when it is first
# imported (squad/frontend/static/download); CI machines reach package registries only. The
# submit API does not use those files, so their places are filled with empty files and marked
# as downloaded: the API runs, the web pages would lack their scripts.
set -eu
cd "$(dirname "$0")/../.."
venv=target/squad-venv
[ -x "$venv/bin/squad-admin" ] || {
    python3 -m venv "$venv"
    timeout 600 "$venv/bin/pip" install --quiet --disable-pip-version-check "squad==1.98"
}
static=$("$venv/bin/python" -c 'import os, importlib.util as u; print(os.path.join(os.path.dirname(u.find_spec("squad").origin), "frontend", "static"))')
cd "$static"
[ -f download.status ] && exit 0
grep -v '^#' download.conf | while read -r destination url sha1; do
    [ -n "$destination" ] || continue
    case "$url" in
        *.js | *.css) mkdir -p "$(dirname "$destination")" && : >"$destination" ;;
        *) mkdir -p "$destination" ;;
    esac
    echo "$destination $url $sha1" >>download.status
done

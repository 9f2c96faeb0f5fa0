#!/bin/sh
# Installs kubernetes-validate (PyPI; it carries the Kubernetes API schemas, so validating
# needs no cluster and no network) into target/kubernetes-validate-venv, for
# crates/rtgauge/tests/kubernetes.rs.
set -eu
cd "$(dirname "$0")/../.."
venv=target/kubernetes-validate-venv
[ -x "$venv/bin/kubernetes-validate" ] && exit 0
python3 -m venv "$venv"
timeout 600 "$venv/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==1.37.0"
"$venv/bin/kubernetes-validate" --version

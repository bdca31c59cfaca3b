#!/bin/sh
# Installs the Prometheus server (Debian package) used by tests/e2e/test_prometheus.py.
# Idempotent: does nothing when the binary is already on PATH.
set -eu
if command -v prometheus >/dev/null 2>&1; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
fi
$SUDO apt-get install -y --no-install-recommends prometheus >/dev/null 2>&1 || {
    $SUDO apt-get update >/dev/null
    $SUDO apt-get install -y --no-install-recommends prometheus >/dev/null
}
command -v prometheus >/dev/null

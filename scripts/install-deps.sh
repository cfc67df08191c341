#!/usr/bin/env bash
# Installs what building and testing Weightscope needs on a fresh Debian machine: the toolchain,
# Qt 6, QCustomPlot, nlohmann/json and Xvfb from Debian; clang and its runtime for the libFuzzer
# targets (scripts/fuzz.sh); dpkg-dev for the .deb package (dpkg-shlibdeps); libcurl for remote
# checkpoints, OpenSSL for validate --hub's digests, and nginx, which the remote tests serve fixtures with (started and stopped by the
# test, on 127.0.0.1; the package's own service is never started); Open MPI for distributed loads and
# scans (mpirun, started by the tests on this machine only). Skips apt entirely
# when all are present.
set -euo pipefail
packages=(cmake ninja-build ccache g++ qt6-base-dev libqcustomplot-dev nlohmann-json3-dev libsimdjson-dev xvfb xauth
          libgl1-mesa-dev python3-venv clang libclang-rt-dev dpkg-dev libcurl4-openssl-dev libssl-dev nginx-light
          libopenmpi-dev openmpi-bin libxxhash-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

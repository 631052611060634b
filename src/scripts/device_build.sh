#!/usr/bin/env bash
# @file device_build.sh: configure and build on the offline GPU machine with the carried Debian packages
# (see ../shared/device/README.md): source .devdeps/unpack.sh first. Builds for sm_90 only.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cmake -S "$root" -B "$root/build-gpu" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build "$root/build-gpu" -j16

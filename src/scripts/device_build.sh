#!/usr/bin/env bash
# @file device_build.sh: configure and build on the offline GPU machine with the carried Debian packages
# (see ../shared/device/README.md): source .devdeps/unpack.sh first. Builds for sm_90 only. For .exr output and the
# EXR tests there, fetch OpenEXR with the rest: ../shared/device/fetch-debs.sh libopenexr-dev libopenexr-3-1-30
# libimath-dev libimath-3-1-29 zlib1g-dev zlib1g libdeflate0 (without it the build refuses .exr and they skip).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cmake -S "$root" -B "$root/build-gpu" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build "$root/build-gpu" -j16

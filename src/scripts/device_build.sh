#!/usr/bin/env bash
# @file device_build.sh: configure and build on an offline GPU machine whose Debian packages were carried to it as
# .deb files and unpacked by .devdeps/unpack.sh (source it first). Builds for sm_90 only. For .exr output and the EXR
# tests there, carry libopenexr-dev libopenexr-3-1-30 libimath-dev libimath-3-1-29 zlib1g-dev zlib1g libdeflate0 too
# (without them the build refuses .exr and those tests skip).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cmake -S "$root" -B "$root/build-gpu" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build "$root/build-gpu" -j16

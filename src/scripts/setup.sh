#!/usr/bin/env bash
# @file setup.sh: installs the Debian packages tracer needs (when missing) and builds it into build/.
# Sourced by the other scripts. Honours CMAKE_CUDA_ARCHITECTURES, TRACER_BUILD_DIR, TRACER_JOBS, TRACER_CMAKE_ARGS and
# TRACER_WERROR (ON: warnings are errors, as in CI).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${TRACER_BUILD_DIR:-$root/build}
jobs=${TRACER_JOBS:-2}
# libopenmpi-dev and openmpi-bin: the MPI driver (mpirun -np N tracer) and its tests. libopenexr-dev: .exr output.
# python3-numpy: the scripts that compare images (pbrt-compare, denoise-report) and their tests.
packages=(cmake g++ make libglm-dev libcxxopts-dev libstb-dev libtinyobjloader-dev libgtest-dev libembree-dev zlib1g-dev xz-utils
  libopenmpi-dev openmpi-bin libopenexr-dev python3-numpy)

source "$root/src/scripts/lib/deps.sh"
tracer_apt_install "${packages[@]}"

cmake_args=(-S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTRACER_WERROR="${TRACER_WERROR:-OFF}")
[ -n "${CMAKE_CUDA_ARCHITECTURES:-}" ] && cmake_args+=(-DCMAKE_CUDA_ARCHITECTURES="$CMAKE_CUDA_ARCHITECTURES")
[ -n "${TRACER_CMAKE_ARGS:-}" ] && read -r -a extra <<<"$TRACER_CMAKE_ARGS" && cmake_args+=("${extra[@]}")
cmake "${cmake_args[@]}" >/dev/null
cmake --build "$build" -j "$jobs"

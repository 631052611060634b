#!/usr/bin/env bash
# @file ncu-compare.sh: Nsight Compute on one kernel in several variants of the renderer, summarised as a
# comparison table (sectors per request, global load efficiency, active threads per warp, DRAM and L2
# throughput, achieved occupancy, registers, duration).
#   usage: src/scripts/ncu-compare.sh KERNEL_REGEX SCENE "label1:flags1" "label2:flags2" ...
#   e.g.   src/scripts/ncu-compare.sh IntersectStage scenes/cornell.obj "aligned:" "naive:--naive-layout"
# Every queued stage runs as StageKernel<Body> (cuda/stage_kernel.cuh), so KERNEL_REGEX is matched against the
# demangled name (--kernel-name-base demangled), e.g. IntersectStage, ShadeStage, ShadowStage, GenerateStage.
# The per-class shade stages share one kernel (the class is a field of the body): pick a class's launch with
# NCU_SKIP, or select by its NVTX range (ncu --nvtx --nvtx-include "shade_diffuse/").
# Environment: TRACER (default build-gpu/tracer), NCU (default ncu), TRACER_ARGS (render flags for all runs,
# default a 1024x1024, 4 spp render), NCU_SKIP (launches of the kernel to skip first, default 3).
set -euo pipefail
kernel=$1 scene=$2
shift 2
tracer=${TRACER:-build-gpu/tracer}
ncu=${NCU:-ncu}
args=${TRACER_ARGS:---width 1024 --height 1024 --spp 4 --backend cuda --quiet}
skip=${NCU_SKIP:-3}
metrics=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct,smsp__thread_inst_executed_per_inst_executed.ratio,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,gpu__time_duration.sum,smsp__inst_executed_op_global_ld.sum
tmp=$(mktemp -d)
printf '%-12s | %12s | %10s | %12s | %11s | %8s | %8s | %9s | %5s | %10s\n' variant sectors/req "ld eff %" "thr/warp" "ld instr" "DRAM %" "L2 %" "occup. %" regs "time us"
printf '%s\n' "-------------+--------------+------------+--------------+-------------+----------+----------+-----------+-------+-----------"
for v in "$@"; do
  label=${v%%:*} flags=${v#*:}
  # shellcheck disable=SC2086
  "$ncu" --csv --print-units base --metrics "$metrics" --kernel-name-base demangled -k "regex:$kernel" --launch-skip "$skip" --launch-count 1 \
    "$tracer" "$scene" -o "$tmp/out.png" $args $flags >"$tmp/$label.csv" 2>"$tmp/$label.err" || { cat "$tmp/$label.err" >&2; exit 1; }
  awk -F'","' -v label="$label" '
    { gsub(/^"|"$/, "", $0) }
    NF > 10 { name=$(NF-2); val=$NF; gsub(/,/, "", val); m[name]=val }
    END {
      req = m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]; sec = m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
      printf "%-12s | %12.2f | %10.1f | %12.1f | %11.0f | %8.1f | %8.1f | %9.1f | %5d | %10.1f\n", label, (req > 0 ? sec / req : 0),
        m["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"], m["smsp__thread_inst_executed_per_inst_executed.ratio"],
        m["smsp__inst_executed_op_global_ld.sum"], m["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
        m["lts__throughput.avg.pct_of_peak_sustained_elapsed"], m["sm__warps_active.avg.pct_of_peak_sustained_active"],
        m["launch__registers_per_thread"], m["gpu__time_duration.sum"] / 1000.0 }' "$tmp/$label.csv"
done
rm -rf "$tmp"

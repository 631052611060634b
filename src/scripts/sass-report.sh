#!/usr/bin/env bash
# @file sass-report.sh: what the compiler really emitted for the wavefront kernels: per kernel, the count of
# 128-bit and 32-bit global loads, global atomics and the warp-vote instructions that warp aggregation uses.
#   usage: src/scripts/sass-report.sh [binary (default build-gpu/tracer)] [kernel-regex]
# The stages run as StageKernel<Body> (cuda/stage_kernel.cuh); the regex is matched against the demangled
# name, and a row shows the body's template arguments, e.g. "IntersectStage<AlignedLayout, compaction=0, true,
# WideBvhTraversal>": layout, compaction (0 warp-aggregated, 1 per-thread atomics, 2 none), read-only loads (kLdg)
# and, for the traversal stages, the BVH.
set -euo pipefail
bin=${1:-build-gpu/tracer}
re=${2:-'IntersectStage|ShadeStage|ShadowStage|GenerateStage'}
command -v cuobjdump >/dev/null || PATH=$PATH:/usr/local/cuda/bin
demangle() { if command -v c++filt >/dev/null; then c++filt; else cat; fi; }
printf '%-70s %9s %8s %7s %6s %6s %5s %5s %6s\n' kernel LDG.E.128 LDG.E.64 LDG.E ATOMG RED VOTE POPC MATCH
cuobjdump -sass "$bin" | awk '
  function flush() { if (name != "") print name "\t" l128 "\t" l64 "\t" l32 "\t" atom "\t" red "\t" vote "\t" popc "\t" match_ }
  /Function : / { flush(); name=$3; l128=l64=l32=atom=red=vote=popc=match_=0; next }
  /\/\*[0-9a-f]+\*\// {
    line = $0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line); sub(/^@!?U?P[0-9T][ \t]+/, "", line); split(line, w, /[ \t]+/); op = w[1]
    if (op ~ /^LDG/) { if (op ~ /\.128/) l128++; else if (op ~ /\.64/) l64++; else if (op !~ /\.(U8|S8|U16|S16)/) l32++ }
    if (op ~ /^ATOMG/) atom++
    if (op ~ /^REDG?\./ || op ~ /^REDUX/) red++
    if (op ~ /^VOTE/) vote++
    if (op ~ /^POPC/) popc++
    if (op ~ /^MATCH/) match_++
  }
  END { flush() }' |
  while IFS=$'\t' read -r n a h b c d e f g; do
    dn=$(echo "$n" | demangle | sed -E 's/tracer:://g; s/>\(.*$/>/; s/^void //; s/\(anonymous namespace\):://g; s/\(Compaction\)/compaction=/g')
    if echo "$dn" | grep -Eq "$re"; then
      dn=$(echo "$dn" | sed -E 's/^StageKernel<(.*[^ ]) *>$/\1/')
      printf '%-70s %9s %8s %7s %6s %6s %5s %5s %6s\n' "$dn" "$a" "$h" "$b" "$c" "$d" "$e" "$f" "$g"
    fi
  done

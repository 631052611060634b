#!/usr/bin/env python3
# @file check_includes.py: the include rules of the three header layers (docs/ARCHITECTURE.md), checked on the
# source tree. Prints one line per violation, "file:line: includes X: rule", and exits 1 when there is any.
#
#   python3 tests/check_includes.py [repository root (default: the parent of this file's folder)]
#
# Rules:
#   core/  headers (host and device code) include no host/ or cuda/ header and no CUDA runtime header;
#   host/  headers (plain C++) include no cuda/ header and no CUDA runtime header;
#   .cpp   files under src/ and tests/ (compiled by g++, also in the CUDA-less sanitizer build) include no
#          cuda/ header and no CUDA runtime header;
#   src/app/ (the CLI) includes no cuda/ header and of core/ only math.h (the vector types);
#   nothing outside src/app/ includes an app header ("app/...", cli.h): the libraries do not depend on the CLI;
#   nothing outside src/mpi/ includes <mpi.h>: MPI is private to tracer_mpi;
#   no host/ header pulls in core/queue.h (the warp intrinsics), through any chain of "tracer/..." includes;
#   the CLI-facing headers (CLI_FACING below, and src/app/cli.h, which main.cpp and tests include) do not pull in, through any chain of
#          "tracer/..." includes, the renderer's internals (FORBIDDEN_FOR_CLI below);
#   naming: a source under src/ or kernels/ named <stem>.cpp / <stem>.cu implements include/tracer/*/<stem>.h
#          (or a <stem>_*.h's part, or a <stem>.h beside it), or is listed in NO_HEADER with the reason.
# Stdlib only. Every #include line counts, also one inside #if: a rule holds for every configuration.
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_rules import report, sources  # noqa: E402

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
CUDA_SYSTEM = {"cuda_runtime.h", "cuda_runtime_api.h", "cuda.h"}

CLI_FACING = ["render_options.h", "render_result.h", "film.h", "pass_driver.h", "backends.h",
              "checkpoint.h", "device_error.h", "file_util.h", "timing.h", "image_io.h"]
FORBIDDEN_FOR_CLI = ["tracer/core/bvh.h", "tracer/core/material.h", "tracer/core/integrator.h", "tracer/core/stages.h"]
CLI_CORE_ALLOWED = {"tracer/core/math.h"}
WARP_INTRINSICS = "tracer/core/queue.h"
APP_HEADER_RE = re.compile(r'^(app/|cli\.h$|scene_setup\.h$|select_backend\.h$|start_job\.h$)')
# Sources that implement no header of the same stem, and why.
NO_HEADER = {
  "src/app/main.cpp": "the entry point",
  "src/app/profile_command.cpp": "a command of cli.h",
  "src/app/render_command.cpp": "a command of cli.h",
  "src/app/make_rays_command.cpp": "a command of cli.h",
  "src/app/trace_command.cpp": "a command of cli.h",
  "src/host/render/cpu_backend.cpp": "the CPU backend of host/backends.h",
  "src/cuda/cuda_backend.cu": "the CUDA backend of host/backends.h",
  "kernels/bounces_aligned.cu": "one layout's bounce kernels (cuda/stage_kernel.cuh), compiled apart to build in parallel",
  "kernels/bounces_naive.cu": "one layout's bounce kernels (cuda/stage_kernel.cuh), compiled apart to build in parallel",
}


def includes_of(path):
  """(line number, '<' or '"', name) of each #include in the file."""
  out = []
  with open(path, encoding="utf-8", errors="replace") as f:
    for n, line in enumerate(f, 1):
      m = INCLUDE_RE.match(line)
      if m:
        out.append((n, m.group(1), m.group(2)))
  return out


def layer(name):
  """'core', 'host' or 'cuda' for "tracer/<layer>/..." includes, else None."""
  parts = name.split("/")
  if len(parts) >= 3 and parts[0] == "tracer" and parts[1] in ("core", "host", "cuda"):
    return parts[1]
  return None


def is_cuda_system(delim, name):
  return delim == "<" and name in CUDA_SYSTEM


def check_file(rel, incs):
  """Violations of the per-file rules, as (line, included name, rule)."""
  out = []
  in_core = rel.startswith("include/tracer/core/")
  in_host = rel.startswith("include/tracer/host/")
  gxx = rel.endswith(".cpp") and (rel.startswith("src/") or rel.startswith("tests/"))
  cli = rel.startswith("src/app/")
  mpi = rel.startswith("src/mpi/")
  for n, delim, name in incs:
    lay = layer(name)
    cuda_sys = is_cuda_system(delim, name)
    if in_core and lay in ("host", "cuda"):
      out.append((n, name, "a core/ header (host and device) may include only core/ headers"))
    if in_core and cuda_sys:
      out.append((n, name, "a core/ header may not include the CUDA runtime"))
    if in_host and lay == "cuda":
      out.append((n, name, "a host/ header (plain C++) may not include a cuda/ header"))
    if in_host and cuda_sys:
      out.append((n, name, "a host/ header (plain C++) may not include the CUDA runtime"))
    if gxx and lay == "cuda":
      out.append((n, name, "a .cpp file is compiled by g++ without CUDA: no cuda/ header"))
    if gxx and cuda_sys:
      out.append((n, name, "a .cpp file is compiled by g++ without CUDA: no CUDA runtime header"))
    if cli and (lay == "cuda" or (lay == "core" and name not in CLI_CORE_ALLOWED)):
      out.append((n, name, "the CLI (src/app/) includes host/ headers and core/math.h only"))
    if not cli and delim == '"' and APP_HEADER_RE.match(name):
      out.append((n, name, "only the CLI (src/app/) includes app headers: the libraries do not depend on it"))
    if not mpi and delim == "<" and name == "mpi.h":
      out.append((n, name, "only src/mpi/ includes <mpi.h>: MPI is private to tracer_mpi"))
  return out


def closure_path(root, start, target):
  """The chain of "tracer/..." includes from `start` to `target` (both "tracer/...", or `start` a path relative to
  the root), or None."""
  seen = {start}
  stack = [(start, [start])]
  while stack:
    name, chain = stack.pop()
    path = os.path.join(root, "include", name) if name.startswith("tracer/") else os.path.join(root, name)
    if not os.path.isfile(path):
      continue
    for _, delim, inc in includes_of(path):
      if not inc.startswith("tracer/") or inc in seen:
        continue
      if inc == target:
        return chain + [inc]
      seen.add(inc)
      stack.append((inc, chain + [inc]))
  return None


def main():
  root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
  violations = []
  files = list(sources(root))
  if not any(f.startswith("include/tracer/") for f in files):
    print(f"check_includes: no include/tracer/ under {root}", file=sys.stderr)
    return 2

  for rel in files:
    incs = includes_of(os.path.join(root, rel))
    for n, name, rule in check_file(rel, incs):
      violations.append(f"{rel}:{n}: includes {name}: {rule}")

  starts = ["tracer/host/" + h for h in CLI_FACING] + ["src/app/cli.h"]
  for start in starts:
    path = os.path.join(root, "include", start) if start.startswith("tracer/") else os.path.join(root, start)
    shown = "include/" + start if start.startswith("tracer/") else start
    if not os.path.isfile(path):
      violations.append(f"{shown}: CLI-facing header listed in check_includes.py is missing")
      continue
    incs = {inc: n for n, _, inc in reversed(includes_of(path))}
    for target in FORBIDDEN_FOR_CLI:
      chain = closure_path(root, start, target)
      if chain:
        violations.append(f"{shown}:{incs.get(chain[1], 1)}: includes {target}: a CLI-facing header may not "
                          f"pull in renderer internals (via {' -> '.join(chain[1:])})")

  for rel in files:
    if not rel.startswith("include/tracer/host/"):
      continue
    start = rel[len("include/"):]
    chain = closure_path(root, start, WARP_INTRINSICS)
    if chain:
      first = {inc: n for n, _, inc in reversed(includes_of(os.path.join(root, rel)))}.get(chain[1], 1)
      violations.append(f"{rel}:{first}: includes {WARP_INTRINSICS}: a host/ header may not pull in the warp "
                        f"intrinsics (via {' -> '.join(chain[1:])})")

  stems = {}
  for rel in files:
    m = re.match(r"include/tracer/[^/]+/([^/]+)\.(h|cuh)$", rel)
    if m:
      stems.setdefault(m.group(1), rel)
  for rel in files:
    m = re.match(r"(?:src|kernels)/(?:.+/)?([^/]+)\.(cpp|cu)$", rel)
    if not m or rel.startswith(("src/tools/", "src/scripts/")) or rel in NO_HEADER:
      continue
    stem = m.group(1)
    beside = os.path.isfile(os.path.join(root, os.path.dirname(rel), stem + ".h"))
    if not beside and stem not in stems and not any(stem.startswith(h + "_") for h in stems):
      violations.append(f"{rel}: implements no include/tracer/*/{stem}.h (nor {stem.split('_')[0]}_*): name a "
                        "source after the header it implements, or list it in NO_HEADER with the reason")

  return report("check_includes", violations, len(files), "include rules", "docs/ARCHITECTURE.md")


if __name__ == "__main__":
  sys.exit(main())

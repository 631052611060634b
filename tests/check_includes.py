#!/usr/bin/env python3
# @file check_includes.py: the include rules of the three header layers (docs/ARCHITECTURE.md), checked on the
# source tree. Prints one line per violation, "file:line: includes X: rule", and exits 1 when there is any;
# sources that implement no header are reported as warnings only.
#
#   python3 tests/check_includes.py [repository root (default: the parent of this file's folder)]
#
# Rules:
#   core/  headers (host and device code) include no host/ or cuda/ header and no CUDA runtime header;
#   host/  headers (plain C++) include no cuda/ header and no CUDA runtime header;
#   .cpp   files under src/ and tests/ (compiled by g++, also in the CUDA-less sanitizer build) include no
#          cuda/ header and no CUDA runtime header;
#   src/main.cpp and src/app/ (the CLI) include no core/ or cuda/ header directly;
#   the CLI-facing host headers (CLI_FACING below) do not pull in, through any chain of "tracer/..." includes,
#          the renderer's internals (FORBIDDEN_FOR_CLI below).
# Naming (warning): src/<stem>.cpp / src/<stem>.cu should implement include/tracer/<layer>/<stem>.h.
# Stdlib only. Every #include line counts, also one inside #if: a rule holds for every configuration.
import os
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
CUDA_SYSTEM = {"cuda_runtime.h", "cuda_runtime_api.h", "cuda.h"}
SOURCE_EXT = (".h", ".cuh", ".hpp", ".cpp", ".cu")
SCAN_DIRS = ("include", "src", "kernels", "tests")
SKIP_DIRS = {os.path.join("tests", "fuzz", "corpus")}

CLI_FACING = ["cli.h", "render_options.h", "render_result.h", "film.h", "pass_driver.h", "backends.h",
              "checkpoint.h", "device_error.h", "file_util.h", "timing.h", "image_io.h"]
CLI_FACING_OPTIONAL = {"cli.h"}  # checked when it exists
FORBIDDEN_FOR_CLI = ["tracer/core/bvh.h", "tracer/core/material.h", "tracer/core/integrator.h", "tracer/core/stages.h"]


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


def sources(root):
  for top in SCAN_DIRS:
    base = os.path.join(root, top)
    for dirpath, dirnames, filenames in os.walk(base):
      rel_dir = os.path.relpath(dirpath, root)
      dirnames[:] = sorted(d for d in dirnames if os.path.join(rel_dir, d) not in SKIP_DIRS)
      for fn in sorted(filenames):
        if fn.endswith(SOURCE_EXT):
          yield os.path.relpath(os.path.join(dirpath, fn), root).replace(os.sep, "/")


def check_file(rel, incs):
  """Violations of the per-file rules, as (line, included name, rule)."""
  out = []
  in_core = rel.startswith("include/tracer/core/")
  in_host = rel.startswith("include/tracer/host/")
  gxx = rel.endswith(".cpp") and (rel.startswith("src/") or rel.startswith("tests/"))
  cli = rel == "src/main.cpp" or rel.startswith("src/app/")
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
    if cli and lay in ("core", "cuda"):
      out.append((n, name, "the CLI (src/main.cpp, src/app/) includes host/ headers only"))
  return out


def closure_path(root, start, target):
  """The chain of "tracer/..." includes from `start` to `target` (both "tracer/..."), or None."""
  seen = {start}
  stack = [(start, [start])]
  while stack:
    name, chain = stack.pop()
    path = os.path.join(root, "include", name)
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
  warnings = []
  files = list(sources(root))
  if not any(f.startswith("include/tracer/") for f in files):
    print(f"check_includes: no include/tracer/ under {root}", file=sys.stderr)
    return 2

  for rel in files:
    incs = includes_of(os.path.join(root, rel))
    for n, name, rule in check_file(rel, incs):
      violations.append(f"{rel}:{n}: includes {name}: {rule}")

  for header in CLI_FACING:
    start = "tracer/host/" + header
    path = os.path.join(root, "include", start)
    if not os.path.isfile(path):
      if header not in CLI_FACING_OPTIONAL:
        warnings.append(f"include/{start}: warning: CLI-facing header listed in check_includes.py is missing")
      continue
    incs = {inc: n for n, _, inc in reversed(includes_of(path))}
    for target in FORBIDDEN_FOR_CLI:
      chain = closure_path(root, start, target)
      if chain:
        first = chain[1]
        violations.append(f"include/{start}:{incs.get(first, 1)}: includes {target}: a CLI-facing header may not "
                          f"pull in renderer internals (via {' -> '.join(chain[1:])})")

  headers = {}
  for rel in files:
    m = re.match(r"include/tracer/[^/]+/([^/]+)\.(h|cuh)$", rel)
    if m:
      headers.setdefault(m.group(1), rel)
  for rel in files:
    m = re.match(r"src/([^/]+)\.(cpp|cu)$", rel)
    if not m or rel == "src/main.cpp":  # main.cpp is the entry point, it implements no header
      continue
    if m.group(1) not in headers:
      warnings.append(f"{rel}: warning: no include/tracer/*/{m.group(1)}.h: name a source after the header it implements")

  for w in warnings:
    print(w)
  for v in violations:
    print(v)
  if violations:
    print(f"check_includes: {len(violations)} violation(s) of the include rules (docs/ARCHITECTURE.md)")
    return 1
  print(f"check_includes: {len(files)} files, include rules hold ({len(warnings)} warning(s))")
  return 0


if __name__ == "__main__":
  sys.exit(main())

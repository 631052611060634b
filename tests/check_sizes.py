#!/usr/bin/env python3
# @file check_sizes.py: the size rules of the sources (docs/TESTING.md): no source file over 800 lines and no
# function over 100 lines, except the kernels' inner loops listed in LONG_ALLOWED with the reason. Prints one line
# per violation, "file:line: what", and exits 1 when there is any.
#
#   python3 tests/check_sizes.py [repository root (default: the parent of this file's folder)]
#
# A function is found as a line that ends a signature ("...) {" or "...) const {", a constructor's initialiser
# list, a lambda assigned to a name) at any depth, measured to its closing brace by counting braces outside
# strings, characters and comments. Stdlib only.
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_rules import report, sources  # noqa: E402

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 100
# Generated data, not code.
FILE_ALLOWED = {"include/tracer/core/ggx_albedo_table.h"}
# "file:function" -> why it may be longer.
LONG_ALLOWED = {
  "kernels/minplus_launch.cu:MinPlusTiledKernel": "a kernel's inner loop: the register-tiled min-plus step, one body "
                                                  "so its 64 accumulators stay in registers",
  "kernels/bvh_build/sah_top.cu:TopSmall": "a kernel's inner loop: a warp builds a whole subtree from its stack of "
  "subgroups (split exactly or binned, partition, push the children) in the warp's shared memory",
}

SIGNATURE_END = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(->\s*[\w:<>, ]+\s*)?\{\s*$")
CONTROL = re.compile(r"^\s*(\}\s*)?(if|for|while|switch|else|do|catch|return)\b")
NAME_RE = re.compile(r"([~\w:]+)\s*\(")


def strip_code(line, state):
  """The line without string and character literals and comments; state['block'] carries /* */ across lines."""
  out = []
  i = 0
  n = len(line)
  while i < n:
    if state["block"]:
      end = line.find("*/", i)
      if end < 0:
        return "".join(out)
      state["block"] = False
      i = end + 2
      continue
    c = line[i]
    if line.startswith("//", i):
      break
    if line.startswith("/*", i):
      state["block"] = True
      i += 2
      continue
    if c in "\"'":
      j = i + 1
      while j < n and line[j] != c:
        j += 2 if line[j] == "\\" else 1
      i = j + 1
      out.append(c + c)
      continue
    out.append(c)
    i += 1
  return "".join(out)


def functions(lines):
  """(name, first line, length) of each function body found."""
  state = {"block": False}
  code = [strip_code(l, state) for l in lines]
  found = []
  for i, c in enumerate(code):
    if not SIGNATURE_END.search(c) or CONTROL.match(c):
      continue
    # The signature may start a few lines up; its name is the last identifier before the first "(".
    sig = c
    k = i
    while "(" not in sig.split(")")[0] and k > 0 and i - k < 6:
      k -= 1
      sig = code[k] + " " + sig
    m = NAME_RE.search(sig)
    if not m or m.group(1) in ("if", "for", "while", "switch", "catch"):
      continue
    depth = 0
    for j in range(i, len(code)):
      depth += code[j].count("{") - code[j].count("}")
      if depth <= 0:
        found.append((m.group(1), i + 1, j - i + 1))
        break
  return found


def main():
  root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
  violations = []
  count = 0
  for rel in sources(root):
    count += 1
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
      lines = f.read().split("\n")
    if lines and lines[-1] == "":
      lines.pop()
    if len(lines) > MAX_FILE_LINES and rel not in FILE_ALLOWED:
      violations.append(f"{rel}:1: {len(lines)} lines (at most {MAX_FILE_LINES}): split it along its seams")
    for name, line, length in functions(lines):
      if length > MAX_FUNCTION_LINES and f"{rel}:{name}" not in LONG_ALLOWED:
        violations.append(f"{rel}:{line}: {name} is {length} lines (at most {MAX_FUNCTION_LINES})")
  return report("check_sizes", violations, count, "size rules", "docs/TESTING.md")


if __name__ == "__main__":
  sys.exit(main())

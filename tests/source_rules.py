# @file source_rules.py: what check_includes.py and check_sizes.py share: which files are the sources, and how a
# checker reports its violations and exits.
import os

SOURCE_EXT = (".h", ".cuh", ".hpp", ".cpp", ".cu")
SCAN_DIRS = ("include", "src", "kernels", "tests")
SKIP_DIRS = {os.path.join("tests", "fuzz", "corpus")}


def sources(root):
  """The C++ and CUDA sources under the scanned folders, as paths relative to root, in a fixed order."""
  for top in SCAN_DIRS:
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
      rel_dir = os.path.relpath(dirpath, root)
      dirnames[:] = sorted(d for d in dirnames if os.path.join(rel_dir, d) not in SKIP_DIRS)
      for fn in sorted(filenames):
        if fn.endswith(SOURCE_EXT):
          yield os.path.relpath(os.path.join(dirpath, fn), root).replace(os.sep, "/")


def report(name, violations, count, what, doc):
  """Prints each violation and a closing line; the exit code: 1 when there is any, else 0."""
  for v in violations:
    print(v)
  if violations:
    print(f"{name}: {len(violations)} violation(s) of the {what} ({doc})")
    return 1
  print(f"{name}: {count} files, {what} hold")
  return 0

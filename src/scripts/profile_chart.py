#!/usr/bin/python3
# @file profile_chart.py: draws output/profile.json (from `tracer --profile`) as a PNG: the speedup of each
# optimisation over its naive twin, and the live paths per bounce of one generation of paths.
# Uses Debian's python3-matplotlib (apt-get install python3-matplotlib).
#   usage: src/scripts/profile_chart.py [profile.json] [chart.png]
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

src = sys.argv[1] if len(sys.argv) > 1 else "output/profile.json"
dst = sys.argv[2] if len(sys.argv) > 2 else "output/profile.png"
with open(src) as f:
    prof = json.load(f)

rows = prof["optimizations"]
names = [r["name"] for r in rows]
speedups = [r["speedup"] for r in rows]
live = prof.get("live_paths_per_bounce_one_generation", [])

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(15, 6.5), gridspec_kw={"width_ratios": [2.2, 1]})
colors = ["#2a9d8f" if s >= 1.0 else "#e76f51" for s in speedups]
y = range(len(rows))
ax1.barh(y, speedups, color=colors)
ax1.axvline(1.0, color="black", linewidth=0.8)
ax1.set_yticks(list(y))
ax1.set_yticklabels(names, fontsize=8)
ax1.invert_yaxis()
ax1.set_xscale("log")
ax1.set_xlabel("speedup over the naive twin (log scale; < 1: the naive version is faster here)")
for i, s in enumerate(speedups):
    ax1.text(s, i, " %.2fx" % s, va="center", fontsize=8)
ax1.set_title("%s, %dx%d, %d spp on %s" % (prof["scene"], prof["width"], prof["height"], prof["spp"], prof["gpu"]["name"]),
              fontsize=10)
ax2.bar(range(len(live)), [v / 1e6 for v in live], color="#264653")
ax2.set_xlabel("bounce")
ax2.set_ylabel("live paths (millions)")
ax2.set_title("live paths per bounce\n(one generation, no regeneration)", fontsize=10)
fig.tight_layout()
fig.savefig(dst, dpi=110)
print("wrote", dst)

// @file bvh_build.cpp: binned-SAH BVH construction (Wald 2007) into the two-box node layout of bvh.h.
//
// The builder works top-down on an explicit stack of ranges, so a deep or unbalanced input cannot overflow
// the host call stack. Each range is either a leaf (written into its parent's kids) or an inner node that
// stores the exact boxes of its two children. Binning follows Wald 2007 ("On fast Construction of SAH-based
// Bounding Volume Hierarchies"): triangles are binned by centroid on all three axes and the cheapest plane
// between bins is kept. Every bin also tracks its centroid bounds, so children inherit exact centroid boxes
// without another pass over their triangles.
//
// Depth is capped so that TraverseBvh's fixed stack (kBvhStackSize) cannot overflow: see kSahDepthBudget.
#include "tracer/host/bvh_build.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "tracer/host/aabb.h"

namespace tracer {
namespace {

// Leaves never hold more than this many triangles, whatever the SAH says: past it a split is forced.
constexpr int kLeafCap = 16;
// A range at depth d with n triangles may use an SAH split only while d + ceil(log2 n) < this budget;
// otherwise it is split at the object median. A median split keeps d + ceil(log2 n) from growing and an SAH
// split raises it by at most one, so no leaf is deeper than the budget and no inner node deeper than
// budget - 1. TraverseBvh holds at most one pending node per level, so the stack needs at most budget
// entries, well below kBvhStackSize.
constexpr int kSahDepthBudget = 48;
static_assert(kSahDepthBudget < kBvhStackSize, "the depth cap must keep TraverseBvh's stack from overflowing");
constexpr int kMaxBins = 64;

using Box = Aabb;

// One triangle during the build: its box and original index, 32 bytes so partitioning moves whole lines.
struct PrimRef {
  Vec3 lo;
  int32_t index;
  Vec3 hi;
  float pad;
  // Centre of the triangle's box; halving each term first cannot overflow for finite input.
  Vec3 Centroid() const { return lo * 0.5f + hi * 0.5f; }
};

struct Bin {
  Box box, centroids;
  int count = 0;
};

// A range waiting to become a leaf or an inner node. Its bounds come from the parent's split.
struct Task {
  int begin, end;
  int depth;   // depth this range would have as a node; the root is 0
  int parent;  // node whose kids point here, or -1 for the root
  int slot;    // 0 = left, 1 = right
  Box bounds, centroids;
};

struct Split {
  int axis = -1;
  int bin = -1;  // last bin on the left
  double cost = std::numeric_limits<double>::infinity();
  Box leftBox, rightBox, leftCentroids, rightCentroids;
  int leftCount = 0;
};

int CeilLog2(int n) {
  int k = 0;
  while ((1 << k) < n && k < 31) ++k;
  return k;
}

class Builder {
 public:
  Builder(std::vector<PrimRef>& refs, const BvhBuildOptions& options) : refs_(refs) {
    bins_ = std::min(std::max(options.bins, 2), kMaxBins);
    maxLeaf_ = std::min(std::max(options.maxLeafSize, 1), kLeafCap);
    ct_ = options.traversalCost;
    ci_ = options.intersectCost;
  }

  void Build(Bvh& bvh) {
    const int n = static_cast<int>(refs_.size());
    Box bounds, centroids;
    for (const PrimRef& r : refs_) {
      bounds.Grow(Box{r.lo, r.hi});
      centroids.Grow(r.Centroid());
    }
    nodes_.reserve(static_cast<size_t>(2 * n / std::max(1, maxLeaf_) + 2));
    maxDepth_ = 0;

    if (n == 1) {
      // One triangle: the layout has no "empty child", so both children of the root are the same leaf.
      BvhNode root;
      WriteBox(root, 0, bounds);
      WriteBox(root, 1, bounds);
      root.kids = Int4{0, 0, 1, 1};
      nodes_.push_back(root);
      maxDepth_ = 1;
    } else {
      std::vector<Task> stack;
      stack.reserve(2 * kSahDepthBudget + 8);
      stack.push_back(Task{0, n, 0, -1, 0, bounds, centroids});
      while (!stack.empty()) {
        Task task = stack.back();
        stack.pop_back();
        Process(task, stack);
      }
    }
    bvh.nodes = std::move(nodes_);
    bvh.depth = maxDepth_;
  }

 private:
  static void WriteBox(BvhNode& node, int slot, const Box& b) {
    Float4& xy = slot == 0 ? node.lxy : node.rxy;
    xy = Float4{b.lo.x, b.hi.x, b.lo.y, b.hi.y};
    if (slot == 0) {
      node.lrz.x = b.lo.z;
      node.lrz.y = b.hi.z;
    } else {
      node.lrz.z = b.lo.z;
      node.lrz.w = b.hi.z;
    }
  }

  void Link(const Task& task, int index, int count) {
    Int4& kids = nodes_[task.parent].kids;
    if (task.slot == 0) {
      kids.x = index;
      kids.z = count;
    } else {
      kids.y = index;
      kids.w = count;
    }
  }

  // Bin of a centroid on one axis; the same expression is used for binning and partitioning, so both agree.
  int BinOf(float c, float lo, float scale) const {
    int b = static_cast<int>((c - lo) * scale);
    return std::min(std::max(b, 0), bins_ - 1);
  }

  // Scale that maps the centroid extent onto [0, bins); 0 when the axis is degenerate (or so thin that the
  // scale overflows).
  float BinScale(const Box& centroids, int axis) const {
    float extent = centroids.hi[axis] - centroids.lo[axis];
    if (!(extent > 0.0f)) return 0.0f;
    float scale = static_cast<float>(bins_) * 0.9999f / extent;
    return std::isfinite(scale) ? scale : 0.0f;
  }

  // Wald 2007: one pass bins every triangle on all three axes, then a sweep from each side evaluates the
  // bins - 1 planes per axis. Costs are left unnormalised (multiplied by the parent's area) so that a
  // parent with zero area still compares correctly.
  Split FindSahSplit(const Task& task) {
    Split best;
    std::array<float, 3> scale{}, lo{};
    bool any = false;
    for (int a = 0; a < 3; ++a) {
      scale[a] = BinScale(task.centroids, a);
      lo[a] = task.centroids.lo[a];
      any |= scale[a] > 0.0f;
      for (int k = 0; k < bins_; ++k) binData_[a][k] = Bin{};
    }
    if (!any) return best;
    for (int i = task.begin; i < task.end; ++i) {
      const PrimRef& r = refs_[i];
      Vec3 c = r.Centroid();
      Box b{r.lo, r.hi};
      for (int a = 0; a < 3; ++a) {
        if (scale[a] == 0.0f) continue;
        Bin& bin = binData_[a][BinOf(c[a], lo[a], scale[a])];
        bin.box.Grow(b);
        bin.centroids.Grow(c);
        ++bin.count;
      }
    }
    std::array<double, kMaxBins> rightCost{};
    for (int a = 0; a < 3; ++a) {
      if (scale[a] == 0.0f) continue;
      // Right-to-left sweep: rightCost[k] is area * count of bins (k, bins).
      Box acc;
      int count = 0;
      for (int k = bins_ - 1; k > 0; --k) {
        acc.Grow(binData_[a][k].box);
        count += binData_[a][k].count;
        rightCost[k - 1] = acc.HalfArea() * count;
      }
      acc = Box{};
      count = 0;
      int total = task.end - task.begin;
      for (int k = 0; k + 1 < bins_; ++k) {
        acc.Grow(binData_[a][k].box);
        count += binData_[a][k].count;
        if (count == 0 || count == total) continue;
        double cost = acc.HalfArea() * count + rightCost[k];
        if (cost < best.cost) {
          best.cost = cost;
          best.axis = a;
          best.bin = k;
        }
      }
    }
    if (best.axis < 0) return best;
    // Children's boxes and centroid boxes, exactly, from the bins of the chosen axis.
    for (int k = 0; k < bins_; ++k) {
      const Bin& bin = binData_[best.axis][k];
      if (k <= best.bin) {
        best.leftBox.Grow(bin.box);
        best.leftCentroids.Grow(bin.centroids);
        best.leftCount += bin.count;
      } else {
        best.rightBox.Grow(bin.box);
        best.rightCentroids.Grow(bin.centroids);
      }
    }
    // Full SAH cost in the same unnormalised units as the leaf cost (count * parent area).
    best.cost = ct_ * task.bounds.HalfArea() + ci_ * best.cost;
    return best;
  }

  void BoundsOf(int begin, int end, Box& bounds, Box& centroids) const {
    bounds = Box{};
    centroids = Box{};
    for (int i = begin; i < end; ++i) {
      bounds.Grow(Box{refs_[i].lo, refs_[i].hi});
      centroids.Grow(refs_[i].Centroid());
    }
  }

  // Object median on the widest centroid axis; ties are broken by triangle index so the result is
  // deterministic. With coincident centroids this is the median in index order.
  int MedianSplit(const Task& task) {
    const int mid = task.begin + (task.end - task.begin) / 2;
    Vec3 e = task.centroids.hi - task.centroids.lo;
    if (!(e.x > 0.0f || e.y > 0.0f || e.z > 0.0f)) return mid;
    int axis = (e.x >= e.y && e.x >= e.z) ? 0 : (e.y >= e.z ? 1 : 2);
    std::nth_element(refs_.begin() + task.begin, refs_.begin() + mid, refs_.begin() + task.end,
                     [axis](const PrimRef& p, const PrimRef& q) {
                       float cp = p.Centroid()[axis], cq = q.Centroid()[axis];
                       return cp < cq || (cp == cq && p.index < q.index);
                     });
    return mid;
  }

  void Process(const Task& task, std::vector<Task>& stack) {
    const int count = task.end - task.begin;
    const bool isRoot = task.parent < 0;
    const bool sahAllowed = task.depth + CeilLog2(count) < kSahDepthBudget;
    Split split;
    if (sahAllowed) split = FindSahSplit(task);

    // Leaf (the root must stay an inner node: the layout keeps leaves only in a parent's kids).
    // Up to maxLeafSize triangles: the usual SAH termination, a leaf unless a split is cheaper.
    // Above it, up to kLeafCap: a leaf only when no split helps at all, i.e. even without the traversal
    // cost the children cost as much as the leaf (heavily overlapping or duplicate triangles), or when no
    // SAH split is available (coincident centroids, or past the depth budget).
    if (!isRoot && count <= kLeafCap) {
      const double area = task.bounds.HalfArea();
      const double leafCost = ci_ * count * area;
      bool leaf = count == 1 || split.axis < 0;
      if (!leaf && count <= maxLeaf_) leaf = !(split.cost < leafCost);
      if (!leaf) leaf = !(split.cost - ct_ * area < leafCost);
      if (leaf) {
        Link(task, task.begin, count);
        maxDepth_ = std::max(maxDepth_, task.depth);
        return;
      }
    }

    Task left{task.begin, 0, task.depth + 1, 0, 0, {}, {}};
    Task right{0, task.end, task.depth + 1, 0, 1, {}, {}};
    int m = -1;
    if (split.axis >= 0) {
      // Partition by the chosen bin. The predicate is the binning expression itself, so the counts match
      // and the children can take their boxes from the bins.
      const int axis = split.axis;
      const float lo = task.centroids.lo[axis], scale = BinScale(task.centroids, axis);
      const int last = split.bin;
      auto mid = std::partition(refs_.begin() + task.begin, refs_.begin() + task.end,
                                [&](const PrimRef& r) { return BinOf(r.Centroid()[axis], lo, scale) <= last; });
      m = static_cast<int>(mid - refs_.begin());
      if (m - task.begin == split.leftCount) {
        left.bounds = split.leftBox;
        left.centroids = split.leftCentroids;
        right.bounds = split.rightBox;
        right.centroids = split.rightCentroids;
      } else if (m == task.begin || m == task.end) {
        m = -1;  // cannot happen with one binning expression, but never emit an empty child
      } else {
        BoundsOf(task.begin, m, left.bounds, left.centroids);
        BoundsOf(m, task.end, right.bounds, right.centroids);
      }
    }
    if (m < 0) {
      m = MedianSplit(task);
      BoundsOf(task.begin, m, left.bounds, left.centroids);
      BoundsOf(m, task.end, right.bounds, right.centroids);
    }
    left.end = right.begin = m;

    const int nodeIndex = static_cast<int>(nodes_.size());
    nodes_.push_back(BvhNode{});
    if (!isRoot) Link(task, nodeIndex, 0);
    WriteBox(nodes_[nodeIndex], 0, left.bounds);
    WriteBox(nodes_[nodeIndex], 1, right.bounds);
    left.parent = right.parent = nodeIndex;
    // Right first, so the left subtree is built next and lands right after its parent in memory.
    stack.push_back(right);
    stack.push_back(left);
  }

  std::vector<PrimRef>& refs_;
  std::vector<BvhNode> nodes_;
  std::array<std::array<Bin, kMaxBins>, 3> binData_;  // scratch, reset per range (only the first bins_)
  int bins_, maxLeaf_;
  double ct_, ci_;
  int maxDepth_ = 0;
};

}  // namespace

Bvh BuildBvh(const std::vector<Vec3>& positions, const BvhBuildOptions& options) {
  if (positions.empty()) throw std::invalid_argument("BuildBvh: no triangles");
  if (positions.size() % 3 != 0)
    throw std::invalid_argument("BuildBvh: positions.size() = " + std::to_string(positions.size()) +
                                " is not a multiple of 3");
  if (positions.size() / 3 > static_cast<size_t>(std::numeric_limits<int32_t>::max() / 2))
    throw std::invalid_argument("BuildBvh: too many triangles for 32-bit node indices");
  const int n = static_cast<int>(positions.size() / 3);

  std::vector<PrimRef> refs(n);
  for (int i = 0; i < n; ++i) {
    Vec3 a = positions[3 * i], b = positions[3 * i + 1], c = positions[3 * i + 2];
    if (!IsFinite(a) || !IsFinite(b) || !IsFinite(c))
      throw std::invalid_argument("BuildBvh: triangle " + std::to_string(i) + " has a non-finite vertex");
    refs[i] = PrimRef{Min(a, Min(b, c)), i, Max(a, Max(b, c)), 0.0f};
  }

  Bvh bvh;
  Builder(refs, options).Build(bvh);

  // Triangles in BVH order; v0.w carries the original index as int bits.
  bvh.order.resize(n);
  bvh.tris.resize(3 * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const int32_t t = refs[i].index;
    bvh.order[i] = t;
    const Vec3& v0 = positions[3 * t];
    const Vec3& v1 = positions[3 * t + 1];
    const Vec3& v2 = positions[3 * t + 2];
    bvh.tris[3 * i] = Float4{v0.x, v0.y, v0.z, FloatFromBits(static_cast<uint32_t>(t))};
    bvh.tris[3 * i + 1] = Float4{v1.x, v1.y, v1.z, 0.0f};
    bvh.tris[3 * i + 2] = Float4{v2.x, v2.y, v2.z, 0.0f};
  }
  return bvh;
}

}  // namespace tracer

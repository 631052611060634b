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
//
// Spatial splits (BuildReferenceBvh, for the tree the wide BVH is collapsed from) follow Stich, Friedrich and
// Dietrich 2009 ("Spatial Splits in Bounding Volume Hierarchies", HPG). The builder then works on references: a
// triangle's index and the box of the part of it that a node holds. Where the two children of the best object split
// overlap by more than kSpatialAlpha of the root's area, a binned spatial split is evaluated too: kSpatialBins
// planes across the node's box per axis, each reference clipped into the bins it spans (the triangle's edges cut at
// the bin planes, intersected with the reference's box) and counted where it enters and where it leaves. The
// cheapest of object split, spatial split and leaf wins. A reference that straddles the chosen plane becomes two
// with clipped boxes, unless keeping it whole on one side costs less (the paper's reference unsplitting).
// References live in one array with room for kSpatialSplitBudget per triangle; each range owns the room after it
// (see Task::cap) and hands it to its children in proportion to their references, so a spatial split is taken
// only when it fits, and the total is bounded. Leaves are copied out in depth-first order, which closes the gaps.
// Without spatial splits there is no room, nothing moves, and the tree is the object-split tree bit for bit.
#include "tracer/host/bvh_build.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "tracer/core/aabb.h"
#include "tracer/core/spatial_split.h"
#include "tracer/host/huge_pages.h"
#include "tracer/host/thread_pool.h"

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
// A spatial split is evaluated where the children of the best object split overlap in a box whose area is more
// than this fraction of the root's (Stich et al. 2009, section 4.1). The paper's 1e-5 gave the wide BVH the same SAH
// cost on the sports car, conference room and bunny (within 0.5%) and took up to 1.6x as long as 1e-4 (bunny: 0.97
// against 0.62 s for the tree, 0.28 s without spatial splits); 1e-3 lost 1% on the conference room.
constexpr double kSpatialAlpha = 1e-4;

using Box = Aabb;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// One reference during the build: its box (the triangle's, or that of the part a spatial split left it) and the
// triangle's original index, 32 bytes so partitioning moves whole lines.
struct PrimRef {
  Vec3 lo;
  int32_t index;
  Vec3 hi;
  float pad;
  // Centre of the reference's box; halving each term first cannot overflow for finite input.
  Vec3 Centroid() const { return lo * 0.5f + hi * 0.5f; }
  Box Bounds() const { return Box{lo, hi}; }
};

struct Bin {
  Box box, centroids;
  int count = 0;
};

// A range waiting to become a leaf or an inner node. Its bounds come from the parent's split.
struct Task {
  int begin, end;
  int cap;     // [end, cap) is room for the references spatial splits add; == end without spatial splits
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

// A spatial split: the plane between bins bin - 1 and bin of the node's box on one axis.
struct SpatialSplit {
  int axis = -1;
  int bin = -1;  // first bin on the right
  double cost = std::numeric_limits<double>::infinity();
  Box leftBox, rightBox;
  int leftCount = 0, rightCount = 0;  // references with a part on each side, before unsplitting
};

struct SpatialBin {
  Box box;        // of the clipped parts of the references in this bin
  int entry = 0;  // references whose first bin this is
  int exit = 0;   // references whose last bin this is
};

int CeilLog2(int n) {
  int k = 0;
  while ((1 << k) < n && k < 31) ++k;
  return k;
}

class Builder {
 public:
  // refs: one per triangle, followed by room for the references that spatial splits add (none without them).
  // positions: the triangles, for clipping.
  Builder(std::vector<PrimRef>& refs, const std::vector<Vec3>& positions, const BvhBuildOptions& options, bool spatial)
      : refs_(refs), positions_(positions), spatial_(spatial) {
    bins_ = std::min(std::max(options.bins, 2), kMaxBins);
    maxLeaf_ = std::min(std::max(options.maxLeafSize, 1), kLeafCap);
    ct_ = options.traversalCost;
    ci_ = options.intersectCost;
  }

  // Builds the tree over the first n references; on return refs holds the references in leaf order (positions
  // as the leaves name them), and no room after them.
  void Build(int n, Bvh& bvh) {
    Box bounds, centroids;
    for (int i = 0; i < n; ++i) {
      bounds.Grow(refs_[i].Bounds());
      centroids.Grow(refs_[i].Centroid());
    }
    rootArea_ = bounds.HalfArea();
    nodes_.reserve(static_cast<size_t>(2 * n / std::max(1, maxLeaf_) + 2));
    out_.reserve(refs_.size());
    maxDepth_ = 0;

    if (n == 1) {
      // One triangle: the layout has no "empty child", so both children of the root are the same leaf.
      BvhNode root;
      WriteBox(root, 0, bounds);
      WriteBox(root, 1, bounds);
      root.kids = Int4{0, 0, 1, 1};
      nodes_.push_back(root);
      out_.push_back(refs_[0]);
      maxDepth_ = 1;
    } else {
      std::vector<Task> stack;
      stack.reserve(2 * kSahDepthBudget + 8);
      stack.push_back(Task{0, n, static_cast<int>(refs_.size()), 0, -1, 0, bounds, centroids});
      while (!stack.empty()) {
        Task task = stack.back();
        stack.pop_back();
        Process(task, stack);
      }
    }
    bvh.nodes = std::move(nodes_);
    bvh.depth = maxDepth_;
    refs_ = std::move(out_);
  }

  int SpatialSplits() const { return spatialSplits_; }

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

  // Stich et al. 2009, section 4.1: a spatial split is worth evaluating where the children of the best object
  // split overlap in more than kSpatialAlpha of the root's area, or where there is no object split at all
  // (coincident centroids).
  bool WorthASpatialSplit(const Task& task, const Split& split) const {
    if (task.cap == task.end) return false;  // no room for a split reference: the split budget is spent here
    return split.axis < 0 || Intersection(split.leftBox, split.rightBox).HalfArea() > kSpatialAlpha * rootArea_;
  }

  // The cheapest spatial split whose references fit the range's room, with its cost in FindSahSplit's units.
  // Each reference counts once in the bin where it starts (entry) and once where it ends (exit), and grows every
  // bin it spans by the part of its triangle there, so a plane's left side has the entries below it and its right
  // side the exits above it (Stich et al. 2009, section 4.2).
  SpatialSplit FindSpatialSplit(const Task& task) {
    SpatialSplit best;
    const int room = task.cap - task.begin;
    constexpr int bins = kSpatialBins;
    // One pass over the references bins them on all three axes.
    const std::array<SpatialPlanes, 3> planes{SpatialPlanes(task.bounds, 0), SpatialPlanes(task.bounds, 1),
                                              SpatialPlanes(task.bounds, 2)};
    for (auto& axisBins : spatialBins_) axisBins.fill(SpatialBin{});
    for (int i = task.begin; i < task.end; ++i) {
      const PrimRef& r = refs_[i];
      for (int a = 0; a < 3; ++a) {
        if (!planes[a].Valid()) continue;
        std::array<SpatialBin, kSpatialBins>& axisBins = spatialBins_[a];
        const int first = planes[a].First(r.lo[a]), last = planes[a].Last(r.hi[a], first);
        if (first == last)
          axisBins[first].box.Grow(r.Bounds());
        else
          BinParts(&positions_[3 * static_cast<size_t>(r.index)], r.Bounds(), a, planes[a], first, last, axisBins);
        ++axisBins[first].entry;
        ++axisBins[last].exit;
      }
    }
    std::array<Box, kSpatialBins> rightBox;
    std::array<int, kSpatialBins> rightCount{};
    for (int a = 0; a < 3; ++a) {
      if (!planes[a].Valid()) continue;
      const std::array<SpatialBin, kSpatialBins>& axisBins = spatialBins_[a];
      // Right-to-left sweep: rightBox[k], rightCount[k] are of bins [k, bins).
      Box acc;
      int count = 0;
      for (int k = bins - 1; k > 0; --k) {
        acc.Grow(axisBins[k].box);
        count += axisBins[k].exit;
        rightBox[k] = acc;
        rightCount[k] = count;
      }
      acc = Box{};
      count = 0;
      for (int k = 1; k < bins; ++k) {
        acc.Grow(axisBins[k - 1].box);
        count += axisBins[k - 1].entry;
        if (count == 0 || rightCount[k] == 0 || count + rightCount[k] > room) continue;
        const double cost = acc.HalfArea() * count + rightBox[k].HalfArea() * rightCount[k];
        if (cost < best.cost) {
          best.cost = cost;
          best.axis = a;
          best.bin = k;
          best.leftBox = acc;
          best.rightBox = rightBox[k];
          best.leftCount = count;
          best.rightCount = rightCount[k];
        }
      }
    }
    if (best.axis >= 0) best.cost = ct_ * task.bounds.HalfArea() + ci_ * best.cost;
    return best;
  }

  // For FindSpatialSplit's estimate: grows bins first..last (first < last) by the parts of the triangle v[0..2]
  // within `box` that lie in them (ForEachBinPart).
  static void BinParts(const Vec3* v, const Box& box, int axis, const SpatialPlanes& planes, int first, int last,
                       std::array<SpatialBin, kSpatialBins>& bins) {
    ForEachBinPart(v, box, axis, planes, first, last, [&bins](int b, const Box& part) { bins[b].box.Grow(part); });
  }

  // Performs a spatial split into left and right (ranges, room and bounds). A straddling reference is split in
  // two, or kept whole on one side where that is cheaper by the split's own estimate (Stich et al. 2009, section
  // 4.3, reference unsplitting), as long as the other side keeps a reference, so neither side is empty. Returns
  // false, changing nothing, if one still were (a check, as for object splits).
  bool SpatialPartition(const Task& task, const SpatialSplit& split, Task& left, Task& right) {
    const int a = split.axis;
    const SpatialPlanes planes(task.bounds, a);
    const float plane = planes.Plane(split.bin);
    Box leftBox = split.leftBox, rightBox = split.rightBox;
    int nl = split.leftCount, nr = split.rightCount;
    leftRefs_.clear();
    rightRefs_.clear();
    for (int i = task.begin; i < task.end; ++i) {
      const PrimRef& r = refs_[i];
      const int first = planes.First(r.lo[a]), last = planes.Last(r.hi[a], first);
      if (last < split.bin) {
        leftRefs_.push_back(r);
        continue;
      }
      if (first >= split.bin) {
        rightRefs_.push_back(r);
        continue;
      }
      const Box whole = r.Bounds();
      Box below, above;
      SplitReference(&positions_[3 * static_cast<size_t>(r.index)], whole, a, plane, below, above);
      // A part that clipping rounded away (the reference touches the plane only within rounding): the box's side
      // of the plane stands in for it, which is conservative.
      if (below.Empty()) below = whole, below.hi[a] = plane;
      if (above.Empty()) above = whole, above.lo[a] = plane;
      const double al = leftBox.HalfArea(), ar = rightBox.HalfArea();
      const double cutCost = al * nl + ar * nr;
      Box grown = leftBox;
      grown.Grow(whole);
      const double wholeLeft = nr > 1 ? grown.HalfArea() * nl + ar * (nr - 1) : kInfinity;
      grown = rightBox;
      grown.Grow(whole);
      const double wholeRight = nl > 1 ? al * (nl - 1) + grown.HalfArea() * nr : kInfinity;
      if (wholeLeft < cutCost && wholeLeft <= wholeRight) {
        leftRefs_.push_back(r);
        leftBox.Grow(whole);
        --nr;
      } else if (wholeRight < cutCost) {
        rightRefs_.push_back(r);
        rightBox.Grow(whole);
        --nl;
      } else {
        leftRefs_.push_back(PrimRef{below.lo, r.index, below.hi, 0.0f});
        rightRefs_.push_back(PrimRef{above.lo, r.index, above.hi, 0.0f});
      }
    }
    if (leftRefs_.empty() || rightRefs_.empty()) return false;
    // The room left over goes to the children in proportion to their references.
    const int l = static_cast<int>(leftRefs_.size()), n = l + static_cast<int>(rightRefs_.size());
    const int spare = task.cap - task.begin - n;
    left.end = task.begin + l;
    left.cap = left.end + static_cast<int>(static_cast<int64_t>(spare) * l / n);
    right.begin = left.cap;
    right.end = right.begin + (n - l);
    right.cap = task.cap;
    std::copy(leftRefs_.begin(), leftRefs_.end(), refs_.begin() + left.begin);
    std::copy(rightRefs_.begin(), rightRefs_.end(), refs_.begin() + right.begin);
    BoundsOf(left.begin, left.end, left.bounds, left.centroids);
    BoundsOf(right.begin, right.end, right.bounds, right.centroids);
    ++spatialSplits_;
    return true;
  }

  // After an object split of task at m (left = [begin, m), right = [m, end)): the room after the range goes to the
  // children in proportion to their references, the right one's moving up to make space for the left one's.
  void ShareRoom(const Task& task, int m, Task& left, Task& right) {
    left.end = right.begin = m;
    right.cap = task.cap;
    const int spare = task.cap - task.end;
    const int shift = static_cast<int>(static_cast<int64_t>(spare) * (m - task.begin) / (task.end - task.begin));
    if (shift > 0) {
      std::move_backward(refs_.begin() + m, refs_.begin() + task.end, refs_.begin() + task.end + shift);
      right.begin += shift;
      right.end += shift;
    }
    left.cap = right.begin;
  }

  // A leaf: its references are copied out, in the order leaves are made (depth first, left first), so that the
  // room between ranges disappears. Without room the copy lands where the references already are.
  void MakeLeaf(const Task& task) {
    Link(task, static_cast<int>(out_.size()), task.end - task.begin);
    out_.insert(out_.end(), refs_.begin() + task.begin, refs_.begin() + task.end);
    maxDepth_ = std::max(maxDepth_, task.depth);
  }

  void Process(const Task& task, std::vector<Task>& stack) {
    const int count = task.end - task.begin;
    const bool isRoot = task.parent < 0;
    // Spatial splits follow the same rule: a child of one has at most as many references as its parent, so
    // d + ceil(log2 n) grows by at most one there too, and the depth bound below holds for them.
    const bool sahAllowed = task.depth + CeilLog2(count) < kSahDepthBudget;
    Split split;
    SpatialSplit spatial;
    if (sahAllowed) {
      split = FindSahSplit(task);
      if (spatial_ && count > 1 && WorthASpatialSplit(task, split)) spatial = FindSpatialSplit(task);
    }
    const bool useSpatial = spatial.axis >= 0 && spatial.cost < split.cost;
    const double splitCost = useSpatial ? spatial.cost : split.cost;

    // Leaf (the root must stay an inner node: the layout keeps leaves only in a parent's kids).
    // Up to maxLeafSize triangles: the usual SAH termination, a leaf unless a split is cheaper.
    // Above it, up to kLeafCap: a leaf only when no split helps at all, i.e. even without the traversal
    // cost the children cost as much as the leaf (heavily overlapping or duplicate triangles), or when no
    // SAH split is available (coincident centroids, or past the depth budget).
    if (!isRoot && count <= kLeafCap) {
      const double area = task.bounds.HalfArea();
      const double leafCost = ci_ * count * area;
      bool leaf = count == 1 || (split.axis < 0 && !useSpatial);
      if (!leaf && count <= maxLeaf_) leaf = !(splitCost < leafCost);
      if (!leaf) leaf = !(splitCost - ct_ * area < leafCost);
      if (leaf) return MakeLeaf(task);
    }

    Task left{task.begin, 0, 0, task.depth + 1, 0, 0, {}, {}};
    Task right{0, task.end, 0, task.depth + 1, 0, 1, {}, {}};
    if (!(useSpatial && SpatialPartition(task, spatial, left, right))) {
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
      ShareRoom(task, m, left, right);
    }

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
  const std::vector<Vec3>& positions_;
  const bool spatial_;
  std::vector<PrimRef> out_;                   // references of the leaves made so far, in leaf order
  std::vector<PrimRef> leftRefs_, rightRefs_;  // scratch of SpatialPartition
  std::array<std::array<SpatialBin, kSpatialBins>, 3> spatialBins_;  // scratch of FindSpatialSplit
  std::vector<BvhNode> nodes_;
  std::array<std::array<Bin, kMaxBins>, 3> binData_;  // scratch, reset per range (only the first bins_)
  int bins_, maxLeaf_;
  double ct_, ci_;
  double rootArea_ = 0.0;
  int maxDepth_ = 0;
  int spatialSplits_ = 0;
};

}  // namespace

ReferenceBvh BuildReferenceBvh(const std::vector<Vec3>& positions, const BvhBuildOptions& options) {
  if (positions.empty()) throw std::invalid_argument("BuildBvh: no triangles");
  if (positions.size() % 3 != 0)
    throw std::invalid_argument("BuildBvh: positions.size() = " + std::to_string(positions.size()) +
                                " is not a multiple of 3");
  if (positions.size() / 3 > static_cast<size_t>(std::numeric_limits<int32_t>::max() / 2))
    throw std::invalid_argument("BuildBvh: too many triangles for 32-bit node indices");
  const int n = static_cast<int>(positions.size() / 3);
  // The references (and so the nodes) that spatial splits add must fit 32-bit node indices too.
  const bool spatial = options.spatialSplits && n > 1 && n < std::numeric_limits<int32_t>::max() / 4;
  const int room = spatial ? static_cast<int>(std::floor(n * (kSpatialSplitBudget - 1.0))) : 0;

  std::vector<PrimRef> refs(static_cast<size_t>(n) + static_cast<size_t>(room));
  for (int i = 0; i < n; ++i) {
    Vec3 a = positions[3 * i], b = positions[3 * i + 1], c = positions[3 * i + 2];
    if (!IsFinite(a) || !IsFinite(b) || !IsFinite(c))
      throw std::invalid_argument("BuildBvh: triangle " + std::to_string(i) + " has a non-finite vertex");
    refs[i] = PrimRef{Min(a, Min(b, c)), i, Max(a, Max(b, c)), 0.0f};
  }

  ReferenceBvh out;
  Builder builder(refs, positions, options, spatial);
  builder.Build(n, out.bvh);
  out.spatialSplits = builder.SpatialSplits();

  // Triangles in BVH order; v0.w carries the original index as int bits.
  const size_t count = refs.size();
  Bvh& bvh = out.bvh;
  bvh.order.resize(count);
  out.boxes.resize(count);
  for (size_t i = 0; i < count; ++i) {
    bvh.order[i] = refs[i].index;
    out.boxes[i] = refs[i].Bounds();
  }
  GatherBvhTriangles(positions, bvh.order, bvh.tris);
  return out;
}

void GatherBvhTriangles(const std::vector<Vec3>& positions, const std::vector<int32_t>& order,
                        std::vector<Float4>& tris, ThreadPool* pool) {
  ResizeOnHugePages(tris, 3 * order.size());
  auto gather = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const int32_t t = order[i];
      const Vec3* v = &positions[3 * static_cast<size_t>(t)];
      tris[3 * i] = Float4{v[0].x, v[0].y, v[0].z, FloatFromBits(static_cast<uint32_t>(t))};
      tris[3 * i + 1] = Float4{v[1].x, v[1].y, v[1].z, 0.0f};
      tris[3 * i + 2] = Float4{v[2].x, v[2].y, v[2].z, 0.0f};
    }
  };
  if (pool)
    pool->ParallelFor(order.size(), size_t(1) << 16, gather);
  else
    gather(0, order.size());
}

Bvh BuildBvh(const std::vector<Vec3>& positions, const BvhBuildOptions& options) {
  BvhBuildOptions objectSplits = options;
  objectSplits.spatialSplits = false;
  return BuildReferenceBvh(positions, objectSplits).bvh;
}

}  // namespace tracer

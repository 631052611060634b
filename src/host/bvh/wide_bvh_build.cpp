// @file wide_bvh_build.cpp: the compressed 8-wide BVH (core/wide_bvh.h) from a binary one, after Ylitie,
// Karras and Laine 2017, section 4:
//   1. a binned-SAH binary BVH with single-triangle leaves and, unless turned off, spatial splits
//      (BuildReferenceBvh): its leaves hold references, a triangle possibly in several, each with its own box;
//   2. bottom-up dynamic programming over it: cost(n, i) is the SAH cost of the subtree of n spread over at
//      most i slots of a wide node, choosing for every binary node whether it becomes a wide node, a leaf of
//      at most three triangles, or is dissolved into its children's slots;
//   3. top-down emission of the cheapest choice, with each node's children placed in slots by direction (see
//      the header) and their boxes quantised conservatively to the node's 8-bit grid. A leaf slot's box is the
//      union of its references' boxes, not of its triangles' vertices, so that a split triangle keeps its
//      clipped boxes. A triangle with several references is stored once per leaf that holds it; each copy reports
//      the triangle's index in the scene's binary BVH, so duplicates are invisible to the renderer.
#include "tracer/host/wide_bvh_build.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "tracer/core/aabb.h"
#include "tracer/core/wide_collapse.h"
#include "tracer/host/bvh_build.h"

namespace tracer {
namespace {

constexpr double kInfCost = std::numeric_limits<double>::infinity();

using Box = Aabb;

// A child of a binary node: an inner node of the flat binary BVH, or a leaf range of its triangles.
struct Item {
  int node = -1;  // >= 0: inner node
  int first = 0, count = 0;
  Box box;
  bool IsLeaf() const { return node < 0; }
};

// What one slot of a wide node receives.
struct Slot {
  bool inner = false;
  Item item;                  // inner: the binary subtree that becomes the child node
  std::vector<int32_t> tris;  // leaf: binary-BVH triangle positions, 1..3
  Box box;
};

class Collapser {
 public:
  Collapser(const Bvh& bin, const std::vector<Box>& refBoxes, const std::vector<int32_t>& mainPosition)
      : bin_(bin), refBoxes_(refBoxes), mainPosition_(mainPosition), n_(bin.nodes.size()) {
    choice_.assign(n_, {});
    count_.assign(n_, 0);
  }

  // The wide BVH and its depth (nodes on the longest path from the root).
  WideBvh Build() {
    // Children are stored after their parents, so a reverse sweep sees both children of a node first.
    for (size_t i = n_; i-- > 0;) Solve(static_cast<int>(i));
    WideBvh out;
    Item root;
    root.node = 0;
    root.box = Child(0, 0).box;
    root.box.Grow(Child(0, 1).box);
    out.nodes.emplace_back();
    Emit(root, 0, 1, out);
    out.depth = depth_;
    return out;
  }

 private:
  Item Child(int node, int side) const {
    const BvhNode& b = bin_.nodes[static_cast<size_t>(node)];
    Item it;
    const Float4& xy = side == 0 ? b.lxy : b.rxy;
    const float zlo = side == 0 ? b.lrz.x : b.lrz.z, zhi = side == 0 ? b.lrz.y : b.lrz.w;
    it.box.lo = Vec3(xy.x, xy.z, zlo);
    it.box.hi = Vec3(xy.y, xy.w, zhi);
    const int index = side == 0 ? b.kids.x : b.kids.y, count = side == 0 ? b.kids.z : b.kids.w;
    if (count > 0) {
      it.first = index;
      it.count = count;
    } else {
      it.node = index;
    }
    return it;
  }
  int Triangles(const Item& it) const { return it.IsLeaf() ? it.count : count_[static_cast<size_t>(it.node)]; }

  // cost(it, s) for s = 1..8 slots (WideChoice::cost).
  void Costs(const Item& it, double* cost) const {
    if (it.IsLeaf()) return WideLeafCosts(it.count, it.box.HalfArea(), cost);
    const WideChoice& c = choice_[static_cast<size_t>(it.node)];
    for (int s = 0; s < kWideSlots; ++s) cost[s] = c.cost[s];
  }

  void Solve(int node) {
    const size_t i = static_cast<size_t>(node);
    const Item l = Child(node, 0), r = Child(node, 1);
    count_[i] = Triangles(l) + Triangles(r);
    Box box = l.box;
    box.Grow(r.box);
    double left[kWideSlots], right[kWideSlots];
    Costs(l, left);
    Costs(r, right);
    SolveWideChoice(left, right, count_[i], box.HalfArea(), choice_[i]);
  }

  void GatherTriangles(const Item& it, std::vector<int32_t>& out) const {
    if (it.IsLeaf()) {
      for (int k = 0; k < it.count; ++k) out.push_back(it.first + k);
      return;
    }
    GatherTriangles(Child(it.node, 0), out);
    GatherTriangles(Child(it.node, 1), out);
  }

  // The box of a leaf slot: of its references' boxes.
  Box ReferenceBox(const std::vector<int32_t>& refs) const {
    Box b;
    for (int32_t r : refs) b.Grow(refBoxes_[static_cast<size_t>(r)]);
    return b;
  }

  void AddLeaves(const Item& leaf, std::vector<Slot>& slots) const {
    for (int k = 0; k < leaf.count; k += kWideLeafMax) {
      Slot s;
      for (int j = k; j < std::min(leaf.count, k + kWideLeafMax); ++j) s.tris.push_back(leaf.first + j);
      s.box = ReferenceBox(s.tris);
      slots.push_back(std::move(s));
    }
  }

  // The slots that `it` takes when given `budget` of them, by the choices Solve recorded.
  void Collect(const Item& it, int budget, std::vector<Slot>& slots) const {
    if (it.IsLeaf()) {
      if ((it.count + kWideLeafMax - 1) / kWideLeafMax <= budget) return AddLeaves(it, slots);
      Slot s;  // too many triangles for the slots left: a node of its own
      s.inner = true;
      s.item = it;
      s.box = it.box;
      slots.push_back(std::move(s));
      return;
    }
    const WideChoice& c = choice_[static_cast<size_t>(it.node)];
    const int left = c.split[budget - 1];
    if (left > 0) {
      Collect(Child(it.node, 0), left, slots);
      Collect(Child(it.node, 1), budget - left, slots);
      return;
    }
    Slot s;
    s.box = it.box;
    if (c.leaf1) {
      GatherTriangles(it, s.tris);
    } else {
      s.inner = true;
      s.item = it;
    }
    slots.push_back(std::move(s));
  }

  void Emit(const Item& it, size_t index, int depth, WideBvh& out) {
    depth_ = std::max(depth_, depth);
    if (depth > kWideMaxDepth)
      throw std::runtime_error("wide BVH: depth " + std::to_string(depth) + " exceeds the traversal stack's bound (" +
                               std::to_string(kWideMaxDepth) + ")");
    std::vector<Slot> slots;
    if (it.IsLeaf()) {
      AddLeaves(it, slots);
    } else {
      const int left = choice_[static_cast<size_t>(it.node)].nodeSplit;
      Collect(Child(it.node, 0), left, slots);
      Collect(Child(it.node, 1), kWideSlots - left, slots);
    }
    Vec3 lo[kWideSlots], hi[kWideSlots];
    bool inner[kWideSlots];
    int tris[kWideSlots];
    const int n = static_cast<int>(slots.size());
    for (int j = 0; j < n; ++j) {
      const Slot& slot = slots[static_cast<size_t>(j)];
      lo[j] = slot.box.lo, hi[j] = slot.box.hi, inner[j] = slot.inner, tris[j] = static_cast<int>(slot.tris.size());
    }
    WideNode node;
    int childOfSlot[kWideSlots];
    if (!EncodeWideNode(lo, hi, inner, tris, n, static_cast<uint32_t>(out.nodes.size()),
                        static_cast<uint32_t>(out.tris.size() / 3), node, childOfSlot))
      throw std::runtime_error("wide BVH: a node's extent does not fit an 8-bit grid");
    std::vector<const Slot*> innerChildren;
    for (int s = 0; s < kWideSlots; ++s) {
      const int j = childOfSlot[s];
      if (j < 0) continue;
      const Slot& slot = slots[static_cast<size_t>(j)];
      if (slot.inner) {
        innerChildren.push_back(&slot);
        continue;
      }
      for (int32_t t : slot.tris)
        for (int v = 0; v < 3; ++v) {
          Float4 p = bin_.tris[static_cast<size_t>(3 * t + v)];
          if (v == 0) p.w = FloatFromBits(static_cast<uint32_t>(MainIndex(t)));
          out.tris.push_back(p);
        }
    }
    out.nodes.resize(out.nodes.size() + innerChildren.size());
    out.nodes[index] = node;
    for (size_t k = 0; k < innerChildren.size(); ++k) Emit(innerChildren[k]->item, node.childBase + k, depth + 1, out);
  }

  // The triangle at position t of the collapsed binary BVH, as a position in the scene's binary BVH.
  int32_t MainIndex(int32_t t) const { return mainPosition_[static_cast<size_t>(bin_.order[static_cast<size_t>(t)])]; }

  const Bvh& bin_;
  const std::vector<Box>& refBoxes_;  // per position of bin_.order
  const std::vector<int32_t>& mainPosition_;
  size_t n_;
  std::vector<WideChoice> choice_;
  std::vector<int32_t> count_;
  int depth_ = 0;
};

}  // namespace

WideBvh BuildWideBvh(const std::vector<Vec3>& positions, const Bvh& binary, const BvhBuildOptions& options) {
  BvhBuildOptions single = options;
  single.maxLeafSize = 1;
  const ReferenceBvh tree = BuildReferenceBvh(positions, single);
  return CollapseToWideBvh(tree.bvh, binary, tree.boxes);
}

WideBvh CollapseToWideBvh(const Bvh& bin, const Bvh& binary, const std::vector<Aabb>& refBoxes) {
  std::vector<int32_t> mainPosition(binary.order.size());
  for (size_t k = 0; k < binary.order.size(); ++k)
    mainPosition[static_cast<size_t>(binary.order[k])] = static_cast<int32_t>(k);
  if (!refBoxes.empty()) return Collapser(bin, refBoxes, mainPosition).Build();
  // No reference boxes: the triangles' own.
  std::vector<Box> boxes(bin.order.size());
  for (size_t k = 0; k < boxes.size(); ++k)
    for (size_t v = 0; v < 3; ++v) {
      const Float4& p = bin.tris[3 * k + v];
      boxes[k].Grow(Vec3(p.x, p.y, p.z));
    }
  return Collapser(bin, boxes, mainPosition).Build();
}

double WideSahCost(const WideBvh& wide) {
  if (wide.nodes.empty()) return 0.0;
  // Slot s's box of a node, decoded from its grid in double (exact: p + q * 2^e).
  auto slotBox = [](const WideNode& n, int s) {
    const double step[3] = {std::ldexp(1.0, n.ex - 127), std::ldexp(1.0, n.ey - 127), std::ldexp(1.0, n.ez - 127)};
    const double p[3] = {n.px, n.py, n.pz};
    const uint8_t* qlo[3] = {n.qlox, n.qloy, n.qloz};
    const uint8_t* qhi[3] = {n.qhix, n.qhiy, n.qhiz};
    double lo[3], hi[3];
    for (int a = 0; a < 3; ++a) lo[a] = p[a] + qlo[a][s] * step[a], hi[a] = p[a] + qhi[a][s] * step[a];
    return std::array<double, 6>{lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]};
  };
  auto halfArea = [](const std::array<double, 6>& b) {
    const double x = b[1] - b[0], y = b[3] - b[2], z = b[5] - b[4];
    return x * y + y * z + z * x;
  };
  // The root's box: the union of its slots'.
  std::array<double, 6> root{kInfCost, -kInfCost, kInfCost, -kInfCost, kInfCost, -kInfCost};
  for (int s = 0; s < kWideSlots; ++s) {
    if (wide.nodes[0].meta[s] == 0) continue;
    const std::array<double, 6> b = slotBox(wide.nodes[0], s);
    for (int a = 0; a < 3; ++a)
      root[2 * a] = std::min(root[2 * a], b[2 * a]), root[2 * a + 1] = std::max(root[2 * a + 1], b[2 * a + 1]);
  }
  const double rootArea = halfArea(root);
  if (!(rootArea > 0.0)) return kWideNodeCost + kWideTriCost * static_cast<double>(wide.tris.size() / 3);
  double cost = kWideNodeCost;  // the root is always visited
  for (const WideNode& n : wide.nodes)
    for (int s = 0; s < kWideSlots; ++s) {
      if (n.meta[s] == 0) continue;
      const double p = halfArea(slotBox(n, s)) / rootArea;
      cost += (n.imask >> s) & 1u ? kWideNodeCost * p : kWideTriCost * p * Popc(n.meta[s] >> 5u);
    }
  return cost;
}

}  // namespace tracer

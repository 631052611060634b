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

#include "tracer/host/aabb.h"
#include "tracer/host/bvh_build.h"

namespace tracer {
namespace {

constexpr double kInfCost = std::numeric_limits<double>::infinity();
// SAH weights of a wide node visit and a triangle test (the paper's c_node = 1, c_prim = 0.3).
constexpr double kNodeCost = 1.0;
constexpr double kTriCost = 0.3;

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
    cost_.assign(n_, {});
    split_.assign(n_, {});
    leaf1_.assign(n_, 0);
    nodeSplit_.assign(n_, 0);
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

  // cost(it, slots), slots = 1..8. A binary leaf of n triangles needs ceil(n / 3) slots; given fewer, it
  // becomes a wide node of its own whose slots are those leaves.
  double Cost(const Item& it, int slots) const {
    if (it.IsLeaf()) {
      const double leaf = kTriCost * it.count * it.box.HalfArea();
      const int need = (it.count + kWideLeafMax - 1) / kWideLeafMax;
      return slots >= need ? leaf : kNodeCost * it.box.HalfArea() + leaf;
    }
    return cost_[static_cast<size_t>(it.node)][static_cast<size_t>(slots - 1)];
  }

  void Solve(int node) {
    const size_t i = static_cast<size_t>(node);
    const Item l = Child(node, 0), r = Child(node, 1);
    count_[i] = Triangles(l) + Triangles(r);
    Box box = l.box;
    box.Grow(r.box);
    const double area = box.HalfArea();
    // spread[s]: the cheapest way to give both children s slots together, the left one left[s] of them.
    std::array<double, kWideSlots + 1> spread;
    std::array<int, kWideSlots + 1> left{};
    spread.fill(kInfCost);
    for (int s = 2; s <= kWideSlots; ++s)
      for (int k = 1; k < s; ++k) {
        const double c = Cost(l, k) + Cost(r, s - k);
        if (c < spread[static_cast<size_t>(s)]) spread[static_cast<size_t>(s)] = c, left[static_cast<size_t>(s)] = k;
      }
    nodeSplit_[i] = static_cast<int8_t>(left[kWideSlots]);
    const double asNode = kNodeCost * area + spread[kWideSlots];
    const double asLeaf = count_[i] <= kWideLeafMax ? kTriCost * count_[i] * area : kInfCost;
    leaf1_[i] = asLeaf <= asNode;
    const double one = std::min(asNode, asLeaf);
    cost_[i][0] = one;
    split_[i][0] = 0;
    for (int s = 2; s <= kWideSlots; ++s) {
      const bool dissolve = spread[static_cast<size_t>(s)] < one;
      cost_[i][static_cast<size_t>(s - 1)] = dissolve ? spread[static_cast<size_t>(s)] : one;
      split_[i][static_cast<size_t>(s - 1)] = static_cast<int8_t>(dissolve ? left[static_cast<size_t>(s)] : 0);
    }
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
    const size_t i = static_cast<size_t>(it.node);
    const int left = split_[i][static_cast<size_t>(budget - 1)];
    if (left > 0) {
      Collect(Child(it.node, 0), left, slots);
      Collect(Child(it.node, 1), budget - left, slots);
      return;
    }
    Slot s;
    s.box = it.box;
    if (leaf1_[i]) {
      GatherTriangles(it, s.tris);
    } else {
      s.inner = true;
      s.item = it;
    }
    slots.push_back(std::move(s));
  }

  // Slot for each child: greedily the (child, slot) pair whose child lies furthest toward the slot's corner.
  static std::array<int, kWideSlots> AssignSlots(const std::vector<Slot>& slots, const Box& box) {
    std::array<int, kWideSlots> childOfSlot;
    childOfSlot.fill(-1);
    std::vector<bool> placed(slots.size(), false);
    const Vec3 c = box.Centre();
    for (size_t round = 0; round < slots.size(); ++round) {
      double best = -kInfCost;
      int bestChild = -1, bestSlot = -1;
      for (size_t j = 0; j < slots.size(); ++j) {
        if (placed[j]) continue;
        const Vec3 v = slots[j].box.Centre() - c;
        for (int s = 0; s < kWideSlots; ++s) {
          if (childOfSlot[static_cast<size_t>(s)] >= 0) continue;
          const double score = (s & 1 ? v.x : -v.x) + (s & 2 ? v.y : -v.y) + (s & 4 ? v.z : -v.z);
          if (score > best) best = score, bestChild = static_cast<int>(j), bestSlot = s;
        }
      }
      placed[static_cast<size_t>(bestChild)] = true;
      childOfSlot[static_cast<size_t>(bestSlot)] = bestChild;
    }
    return childOfSlot;
  }

  // The node's grid on one axis: the smallest power-of-two step with which every child's planes round outward
  // to bytes; then the bytes, checked by decoding them as p + q * step in float.
  static void Quantise(const std::vector<Slot>& slots, const std::array<int, kWideSlots>& childOfSlot, int axis,
                       float p, float hi, uint8_t& exponent, uint8_t* qlo, uint8_t* qhi) {
    const double extent = static_cast<double>(hi) - p;
    int e = extent > 0.0 ? static_cast<int>(std::ceil(std::log2(extent / 255.0))) : -126;
    for (e = std::max(e, -126); e <= 127; ++e) {
      const float step = std::ldexp(1.0f, e);
      bool fits = true;
      for (int s = 0; s < kWideSlots && fits; ++s) {
        const int j = childOfSlot[static_cast<size_t>(s)];
        if (j < 0) {
          qlo[s] = 255, qhi[s] = 0;  // empty: an inverted box (and meta 0)
          continue;
        }
        const Box& b = slots[static_cast<size_t>(j)].box;
        const float lo = Axis(b.lo, axis), top = Axis(b.hi, axis);
        double q = std::floor((static_cast<double>(lo) - p) / step);
        int ql = static_cast<int>(std::min(std::max(q, 0.0), 255.0));
        // Checked in double, where p + q * step is exact: the traversal never rounds the plane itself.
        auto plane = [&](int qq) { return static_cast<double>(p) + qq * static_cast<double>(step); };
        while (ql > 0 && plane(ql) > lo) --ql;
        q = std::ceil((static_cast<double>(top) - p) / step);
        int qh = static_cast<int>(std::min(std::max(q, 0.0), 255.0));
        while (qh < 255 && plane(qh) < top) ++qh;
        fits = plane(qh) >= top && plane(ql) <= lo;
        qlo[s] = static_cast<uint8_t>(ql), qhi[s] = static_cast<uint8_t>(qh);
      }
      if (fits) {
        exponent = static_cast<uint8_t>(e + 127);
        return;
      }
    }
    throw std::runtime_error("wide BVH: a node's extent does not fit an 8-bit grid");
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
      const int left = nodeSplit_[static_cast<size_t>(it.node)];
      Collect(Child(it.node, 0), left, slots);
      Collect(Child(it.node, 1), kWideSlots - left, slots);
    }
    Box box;
    for (const Slot& s : slots) box.Grow(s.box);
    const std::array<int, kWideSlots> childOfSlot = AssignSlots(slots, box);

    WideNode node{};
    node.px = box.lo.x, node.py = box.lo.y, node.pz = box.lo.z;
    Quantise(slots, childOfSlot, 0, box.lo.x, box.hi.x, node.ex, node.qlox, node.qhix);
    Quantise(slots, childOfSlot, 1, box.lo.y, box.hi.y, node.ey, node.qloy, node.qhiy);
    Quantise(slots, childOfSlot, 2, box.lo.z, box.hi.z, node.ez, node.qloz, node.qhiz);
    node.childBase = static_cast<uint32_t>(out.nodes.size());
    node.triBase = static_cast<uint32_t>(out.tris.size() / 3);
    std::vector<const Slot*> innerChildren;
    uint32_t offset = 0;
    for (int s = 0; s < kWideSlots; ++s) {
      const int j = childOfSlot[static_cast<size_t>(s)];
      if (j < 0) continue;
      const Slot& slot = slots[static_cast<size_t>(j)];
      if (slot.inner) {
        node.imask |= static_cast<uint8_t>(1u << s);
        node.meta[s] = static_cast<uint8_t>(kWideInnerMeta + static_cast<uint32_t>(s));
        innerChildren.push_back(&slot);
        continue;
      }
      node.meta[s] = static_cast<uint8_t>((((1u << slot.tris.size()) - 1u) << 5) | offset);
      offset += static_cast<uint32_t>(slot.tris.size());
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
  std::vector<std::array<double, kWideSlots>> cost_;
  std::vector<std::array<int8_t, kWideSlots>> split_;  // per budget: the left child's share, 0 = one slot
  std::vector<uint8_t> leaf1_;                         // in one slot: a leaf (1) or a node (0)
  std::vector<int8_t> nodeSplit_;                      // as a wide node: the left child's share of the 8 slots
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
  if (!(rootArea > 0.0)) return kNodeCost + kTriCost * static_cast<double>(wide.tris.size() / 3);
  double cost = kNodeCost;  // the root is always visited
  for (const WideNode& n : wide.nodes)
    for (int s = 0; s < kWideSlots; ++s) {
      if (n.meta[s] == 0) continue;
      const double p = halfArea(slotBox(n, s)) / rootArea;
      cost += (n.imask >> s) & 1u ? kNodeCost * p : kTriCost * p * Popc(n.meta[s] >> 5u);
    }
  return cost;
}

}  // namespace tracer

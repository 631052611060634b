// @file scene_data_host.h: the renderable scene in host memory: BVH, per-triangle shading in BVH order,
// materials, textures and the emitter tables, laid out exactly as the device copy is. View() points a
// SceneView at these vectors for the CPU renderer; the CUDA renderer uploads the same vectors.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tracer/core/scene_view.h"
#include "tracer/core/wide_bvh.h"
#include "tracer/host/hasher.h"
#include "tracer/host/scene_loader.h"

namespace tracer {

struct Bvh;
struct WideBvh;
struct BvhBuildOptions;

// How a BVH build went, for the "built the BVH" line and --benchmark: which builder, and where its time went.
struct BvhBuildReport {
  std::string builder = "cpu";  // "cpu": BuildBvh and BuildWideBvh; "gpu": the GPU builder
  double buildMs = 0.0;         // the GPU builder's kernels (CUDA events); the host builders' wall time
  double transferMs = 0.0;      // GPU builder: uploading positions, reading the trees back, gathering their triangles
  // GPU builder, parts of buildMs: Morton codes and their sort, clustering, the SAH top over the clusters, the top-down
  // sweeps that write the layouts
  double sortMs = 0.0, clusterMs = 0.0, topMs = 0.0, sweepMs = 0.0;
  std::string method;  // GPU builder: "H-PLOC" (one launch) or "PLOC passes" (its naive twin); BuildBvhsAuto adds, or
                       // when it keeps the host-built tree is, "auto: SAH cost ..." with both trees' costs
  int iterations = 0;  // GPU builder: clustering passes (PLOC passes only)
  std::string note;    // why a GPU build fell back to the host builders, if it did
};

// A builder that replaces BuildBvh and BuildWideBvh (the GPU builder, host/bvh_build_gpu.h): fills binary (and wide
// when options.wide) for the triangles of positions, as the host builders would, and says how it went.
using BvhBuilderFn = BvhBuildReport (*)(const std::vector<Vec3>& positions, const BvhBuildOptions& options, Bvh& binary,
                                        WideBvh& wide);

struct BvhBuildOptions {
  int bins = 16;        // SAH bins per axis
  int maxLeafSize = 4;  // triangles
  float traversalCost = 1.0f;
  float intersectCost = 1.0f;
  bool wide = true;  // also build the compressed wide BVH (core/wide_bvh.h), which traversal then uses
  // Spatial splits (SBVH, Stich et al. 2009) in the binary tree that the wide BVH is collapsed from: a triangle may
  // then stand in several leaves, each with the box of its part there. Off (--no-spatial-splits, the naive twin):
  // object splits only, the wide BVH as before. The scene's binary BVH (Bvh::order) never uses them.
  bool spatialSplits = true;
  // The GPU builder's spatial-split top (kernels/bvh_build/split_top.h) for the wide BVH, tried where the triangles'
  // waste passes its gate and kept where it lowers the SAH cost: the sports car's tree then traces and renders as the
  // host builder's (docs/PERFORMANCE.md). Only with wide and spatialSplits (--no-spatial-splits, the naive twin, turns
  // it off), on the GPU builder's H-PLOC (not PLOC's passes).
  bool splitTop = true;
  // Null: the host builders (binned SAH, spatial splits as above). Set by --bvh-builder gpu (src/app).
  BvhBuilderFn builder = nullptr;
};

struct Bvh {
  std::vector<BvhNode> nodes;
  std::vector<Float4> tris;    // 3 per triangle, BVH order; v0.w = original index as int bits
  std::vector<int32_t> order;  // BVH position -> original triangle index
  int depth = 0;
  BvhView View() const {
    return BvhView{nodes.data(), tris.data(), static_cast<int32_t>(nodes.size()), static_cast<int32_t>(order.size())};
  }
};

// The compressed wide BVH (core/wide_bvh.h); empty when only the binary one is wanted.
struct WideBvh {
  std::vector<WideNode> nodes;
  std::vector<Float4> tris;  // 3 per triangle, leaf order; v0.w = the triangle's index in Bvh order
  int depth = 0;
  WideBvhView View() const { return WideBvhView{nodes.data(), tris.data()}; }
};

// Builds an alias table for weights (Vose 1991). Weights must be >= 0 with a positive sum.
std::vector<AliasEntry> BuildAliasTable(const std::vector<double>& weights);

// Emitters grouped for tile-guided sampling (see light_tiles_host.h). Emitters are numbered cluster by
// cluster: cluster c holds emitters [clusterStart[c], clusterStart[c+1]).
struct LightClusters {
  std::vector<int32_t> clusterStart;
  std::vector<AliasEntry> clusterAlias;  // per cluster, over its own emitters, laid end to end
  std::vector<int32_t> emitterCluster;
  std::vector<float> emitterInClusterPmf;
  std::vector<float> clusterPowerPmf;
  int Count() const { return static_cast<int>(clusterPowerPmf.size()); }
};

// The environment map's arrays (core/environment.h), empty without --env-map, and the environment's scalars.
struct EnvMap {
  std::vector<Float4> texels;
  std::vector<float> marginalCdf;
  std::vector<float> conditionalCdf;
  EnvParams params{0, 0, 1.0f, 0.0f, 0.0f, 0.0f};
  double power = 0.0;  // its share of light selection is power / (power + the emitters' power); see host/env_map.h
};

struct SceneData {
  Bvh bvh;
  WideBvh wide;
  std::vector<TriShading> shading;
  std::vector<Material> materials;
  std::vector<Float4> texels;
  std::vector<TextureInfo> textures;
  std::vector<AliasEntry> lightAlias;
  std::vector<int32_t> emitterTri;
  std::vector<int32_t> triEmitter;
  std::vector<uint8_t> emitterTwoSided;  // per emitter, 1 where it emits on both sides; empty when none does
  std::vector<double> emitterPower;      // luminance(Ke) * area * pi (twice that when two-sided), for selection
  std::vector<DeltaLight> deltaLights;   // the scene's point, spot and distant lights with power (core/delta_lights.h)
  std::vector<AliasEntry> deltaAlias;    // picks among them by DeltaLightPower
  float deltaShare = 0.0f;               // SceneView::deltaShare; UpdateEnvironmentShare (host/env_map.h) sets it
  Vec3 boundsMin, boundsMax;
  Camera camera;
  Vec3 environment;
  EnvMap env;  // host/env_map.h fills it
  // The environment's portals (core/portals.h), in the Scene's order; empty when it has none. BuildPortals fills it.
  std::vector<PortalPiece> portals;
  // Their pick probabilities at the vertices of PortalLatticeFor(boundsMin, boundsMax, n) (core/portals.h), cumulative,
  // kPortalFacings tables of count per vertex; empty without portals. BuildPortalLattice fills it.
  std::vector<float> portalCdf;
  // The half-spaces where a ray crosses at most one of them (PortalView::sides); BuildPortalSides fills it.
  std::vector<Float4> portalSides;
  LightClusters clusters;  // empty until BuildLightClusters
  BvhBuildReport bvhReport;
  // Seconds BuildSceneData spent after the BVH builds (shading, emitter, material and texture arrays), for the
  // loading breakdown of --benchmark.
  double arraysSeconds = 0.0;

  // Host pointers to every array of TRACER_SCENE_ARRAYS (core/scene_view.h), null for an empty one (as
  // DeviceScene's are); the tile guide's per-tile arrays are left empty.
  SceneView View() const;
};

// Throws std::invalid_argument when the traversal asked for (the wide BVH unless binaryBvh) was not built.
void RequireBvh(const SceneData& data, bool binaryBvh);
// The same where only whether the wide BVH was built is known (a scene copied from another process's device).
void RequireBvh(bool wideBuilt, bool binaryBvh);

// Bytes of the binary (or wide) BVH's nodes and triangles per scene triangle.
double BvhBytesPerTriangle(const SceneData& data, bool wide);
// The wide BVH's leaf entries per triangle: above 1 where spatial splits put a triangle in several leaves.
double WideReferencesPerTriangle(const SceneData& data);

// "binary BVH: N nodes, depth D, B bytes/triangle; wide BVH: ..." for messages (the wide part when built).
std::string DescribeBvhs(const SceneData& data);

// Every array of the scene, in the one order that SceneContentHash reads them and an MPI job sends them in: each
// of TRACER_SCENE_ARRAYS, then two that the list leaves out because no kernel reads them (the binary BVH's triangle
// order, the emitters' power; the delta lights' power follows from their records and the bounds). Calls
// visit(vector, hashed) for each; `hashed`: SceneContentHash covers it.
template <typename Data, typename Visit>  // Data: SceneData or const SceneData
void ForEachSceneArray(Data& data, Visit&& visit) {
#define TRACER_VISIT_ARRAY(T, name, dataMember, viewMember, what) visit(data.dataMember, !IsDerivedSceneArray(#name));
  TRACER_SCENE_ARRAYS(TRACER_VISIT_ARRAY)
#undef TRACER_VISIT_ARRAY
  visit(data.bvh.order, false);
  visit(data.emitterPower, false);
}

// A 64-bit hash of every array of TRACER_SCENE_ARRAYS, size and bytes, in list order: any change to one byte
// or one size changes it. Scalars (camera, environment and its params, bounds) and emitterPower are not part of it, nor
// are the arrays IsDerivedSceneArray names (the wide BVH).
uint64_t SceneContentHash(const SceneData& data);

// A hash of what SceneContentHash reads, not of a scene: the arrays' names and their elements' sizes, in list order.
// It changes when a build hashes scenes another way (an array added, a record grown), so that a checkpoint written
// by another build is refused for that reason and not for a changed scene.
uint64_t SceneLayoutHash();

// SceneContentHash of a scene whose bytes arrive piece by piece, so that a process receiving it can hash what it
// has while the rest is on its way. The arrays of ForEachSceneArray, laid end to end, form one stream of Bytes();
// HashUpTo(n) hashes the stream up to byte n; once the whole stream is hashed, Digest() is SceneContentHash.
// The arrays must have their final sizes when the stream is made and stay where they are.
class SceneHashStream {
 public:
  explicit SceneHashStream(const SceneData& data);
  size_t Bytes() const { return bytes_; }
  void HashUpTo(size_t streamBytes);  // streamBytes beyond what was hashed before: the bytes in between
  uint64_t Digest() const;            // throws std::logic_error before the whole stream was hashed

 private:
  struct Part {
    const unsigned char* data;
    size_t bytes;
    bool hashed;
  };
  std::vector<Part> parts_;
  size_t bytes_ = 0;
  size_t part_ = 0, start_ = 0, offset_ = 0;  // hashed: parts_[0, part_) (start_ bytes) and offset_ bytes more
  Hasher hasher_;
};

SceneData BuildSceneData(const Scene& scene, const Camera& camera, Vec3 environment,
                         const BvhBuildOptions& bvhOptions = {});

class ThreadPool;

// What BuildSceneData fills after the BVH builds, given d.bvh.order: the shading and emitter arrays (over the pool's
// threads, the same bytes for any number of them), the materials and the textures. BuildSceneData uses every core.
void BuildSceneArrays(const Scene& scene, SceneData& d, ThreadPool& pool);

// Reorders the emitters (and their tables) by a permutation, for clustering: newOrder[i] = old emitter.
void PermuteEmitters(SceneData& data, const std::vector<int32_t>& newOrder);

// The portal triangles of `positions` (3 per triangle) as the pieces SceneView reads (core/portals.h): two consecutive
// triangles that form a parallelogram are one piece, any other triangle one; each with its corner, edges, area and the
// cumulative area fractions. Zero-area triangles are left out. Throws SceneError above kMaxPortalTriangles triangles.
std::vector<PortalPiece> BuildPortals(const std::vector<Vec3>& positions);
// The portals' total area (0 without portals).
double PortalArea(const std::vector<PortalPiece>& portals);
// The lattice of the portals' pick probabilities over the box [lo, hi] for `pieces` portal pieces: the most cells along
// its longest side of 64, 48, 32, 24, 16, ... whose tables (kPortalFacings per vertex) fit kPortalLatticeBytes (64
// for a few windows in a room, 12 for 256 pieces), and along the others as many as fit at that spacing (at least 1).
constexpr double kPortalLatticeBytes = 32.0 * 1024 * 1024;
PortalLattice PortalLatticeFor(Vec3 lo, Vec3 hi, size_t pieces);
// PortalView::cdf for the portals and the scene's bounds: at each vertex of PortalLatticeFor(boundsMin, boundsMax, n),
// per facing (core/portals.h), every piece's share, cumulative: for the hemisphere about an axis, (1 -
// kPortalSphereShare) times its share of the projected solid angle there (the solid angle's alone where no piece
// reaches that side) plus kPortalSphereShare times its share of the solid angle; for the sphere, the latter alone (by
// area where a vertex lies in the plane of every portal). Empty without portals. Rows of vertices run on the pool.
std::vector<float> BuildPortalLattice(const std::vector<PortalPiece>& portals, Vec3 boundsMin, Vec3 boundsMax,
                                      ThreadPool& pool);
// PortalView::sides: for each piece whose plane has every other piece on one closed side, that side (xyz the unit
// normal n toward it, w the offset c: n.o >= c), duplicates merged; none for a piece with every other one in its plane
// (and (0, 0, 0, 0), which every origin satisfies, if that leaves none); the single record (0, 0, 0, 1), which no
// origin satisfies, where some piece has others strictly on both sides of its plane or two coplanar pieces overlap. A
// ray from an origin inside every one of them crosses at most one piece: having crossed piece i's plane it is on the
// side away from the others (proof at PortalView::sides). Planes within kPortalPlaneTolerance of the portals' extent
// (or 1e-6 of their largest coordinate, where the corners' float rounding is larger) count as one. Empty without
// portals.
constexpr float kPortalPlaneTolerance = 1e-5f;
std::vector<Float4> BuildPortalSides(const std::vector<PortalPiece>& portals);
// What BuildPortalSides's records say, for reports: the two special records in words, else how many half-spaces.
std::string DescribePortalSides(const std::vector<Float4>& sides);

// The radius of the scene's bounding sphere, half its bounds' diagonal.
double SceneRadius(const SceneData& data);
// A delta light's power by luminance, as pbrt-v4's Light::Phi gives it: 4 pi I (point), 2 pi I (1 - (cos start + cos
// end) / 2) (spot: its smoothstep falloff counted as linear in the cosine), pi r^2 E (distant, r: sceneRadius).
double DeltaLightPower(const DeltaLight& light, double sceneRadius);
// Fills data.deltaLights and data.deltaAlias from the scene's delta lights, leaving out those without power (black,
// or a spot of no cone); needs data's bounds. BuildSceneData calls it.
void BuildDeltaLights(const Scene& scene, SceneData& data);

}  // namespace tracer

// @file triangles.cpp: the Scene's triangles, positions, normals and uvs, written in parallel from the faces.
#include "triangles.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "obj_scan.h"
#include "scene_text.h"
#include "tracer/core/portals.h"
#include "tracer/host/huge_pages.h"

namespace tracer::loader {
namespace {

// Normalizes in double (coordinates up to 1e30 would overflow float squares); false if zero or non-finite.
bool NormalizeChecked(double x, double y, double z, Vec3* out) {
  double len = std::sqrt(x * x + y * y + z * z);
  if (!(len > 0.0) || !std::isfinite(len)) return false;
  *out = Vec3(float(x / len), float(y / len), float(z / len));
  return IsFinite(*out);
}

// The corners and face normal of a triangle; false when it is not finite or has zero area (also once rounded to
// float: light sampling divides by it).
bool FaceGeometry(const tinyobj::attrib_t& attrib, const tinyobj::index_t* idx, Vec3 p[3], Vec3* ng) {
  bool finite = true;
  double dp[3][3];
  for (int k = 0; k < 3; ++k) {
    p[k] = ToVec3(&attrib.vertices[3 * size_t(idx[k].vertex_index)]);
    finite = finite && IsFinite(p[k]);
    for (int c = 0; c < 3; ++c) dp[k][c] = p[k][c];
  }
  // Face normal in double: float cross products overflow for coordinates near 1e30.
  double e1[3], e2[3];
  for (int c = 0; c < 3; ++c) e1[c] = dp[1][c] - dp[0][c], e2[c] = dp[2][c] - dp[0][c];
  double cx = e1[1] * e2[2] - e1[2] * e2[1], cy = e1[2] * e2[0] - e1[0] * e2[2], cz = e1[0] * e2[1] - e1[1] * e2[0];
  float area = float(0.5 * std::sqrt(cx * cx + cy * cy + cz * cz));
  return finite && area > 0.0f && NormalizeChecked(cx, cy, cz, ng);
}

// A run of one block's triangles, converted as one task.
struct FacePiece {
  size_t shape, begin, end;       // shape: the block
  size_t firstNumber;             // the file's number (TriangleNumbers) of the block's triangle `begin`
  size_t kept = 0, firstOut = 0;  // triangles kept, and where the first of them goes in the Scene's arrays
  bool needsDefault = false;      // a kept face has no (defined) material
  size_t badNormals = 0;
  std::vector<int64_t> dropped{};  // the numbers of the piece's dropped triangles, ascending (portals' too)
  std::vector<Vec3> portals{};     // the piece's portal triangles, 3 corners each
  size_t degenerate = 0;           // dropped for being degenerate or non-finite
  size_t texturedPortals = 0;      // faces named as portals' but with a textured material: kept as geometry
  Vec3 lo{kInf}, hi{-kInf};
};

// The blocks' faces cut into runs of about equal length (none spanning two blocks), as many as the pool wants.
std::vector<FacePiece> CutFacePieces(const std::vector<TriangleBlock>& blocks, size_t numFaces, ThreadPool& pool) {
  const size_t numPieces = pool.PiecesFor(numFaces, 1024);
  const size_t perPiece = std::max<size_t>(1, (numFaces + numPieces - 1) / numPieces);
  std::vector<FacePiece> pieces;
  size_t blockNumber = 0;  // the blocks' triangles are numbered on from one block to the next, as the file has them
  for (size_t s = 0; s < blocks.size(); ++s) {
    for (size_t f = 0; f < blocks[s].count; f += perPiece)
      pieces.push_back(FacePiece{s, f, std::min(f + perPiece, blocks[s].count), blockNumber + f});
    blockNumber += blocks[s].count;
  }
  return pieces;
}

// The two passes over one piece: Count (the indices checked, the triangles kept counted), then Write (the kept
// triangles written from the piece's offset in the Scene's arrays). Both run on many threads at once; each changes
// only its piece and (Write) the piece's range of the Scene's arrays.
class FaceConverter {
 public:
  FaceConverter(Scene& scene, const std::string& path, const tinyobj::attrib_t& attrib,
                const std::vector<TriangleBlock>& blocks, size_t numObjMaterials)
      : scene_(scene), path_(path), attrib_(attrib), blocks_(blocks), numObjMaterials_(numObjMaterials) {}

  void Count(FacePiece& piece) const {
    const TriangleBlock& block = blocks_[piece.shape];
    for (size_t f = piece.begin; f < piece.end; ++f) {
      const tinyobj::index_t* idx = &block.corners[3 * f];
      for (int k = 0; k < 3; ++k) {
        if (idx[k].vertex_index < 0 || size_t(idx[k].vertex_index) >= numV_ || idx[k].normal_index < -1 ||
            (idx[k].normal_index >= 0 && size_t(idx[k].normal_index) >= numN_) || idx[k].texcoord_index < -1 ||
            (idx[k].texcoord_index >= 0 && size_t(idx[k].texcoord_index) >= numT_))
          Fail(path_, 0, "internal: an index out of range after parsing (shape " + Quote(block.name) + ")");
      }
      Vec3 p[3], ng;
      const bool valid = FaceGeometry(attrib_, idx, p, &ng);
      if (valid && block.IsPortal(f) && !PortalFace(piece, f)) piece.texturedPortals++;
      if (!valid || PortalFace(piece, f)) {
        piece.dropped.push_back(static_cast<int64_t>(piece.firstNumber + (f - piece.begin)));
        if (!valid)
          piece.degenerate++;
        else
          piece.portals.insert(piece.portals.end(), p, p + 3);
        continue;
      }
      piece.kept++;
      piece.needsDefault = piece.needsDefault || Material(piece, f) < 0;
    }
  }

  // defaultMaterial: the Scene's material for faces without a (defined) one.
  void Write(FacePiece& piece, int defaultMaterial) const {
    size_t out = piece.firstOut;
    for (size_t f = piece.begin; f < piece.end; ++f) {
      const tinyobj::index_t* idx = &blocks_[piece.shape].corners[3 * f];
      Vec3 p[3], ng;
      if (PortalFace(piece, f) || !FaceGeometry(attrib_, idx, p, &ng)) continue;
      for (int k = 0; k < 3; ++k) {
        Vec3 n = ng;
        if (idx[k].normal_index >= 0) {
          const tinyobj::real_t* fn = &attrib_.normals[3 * size_t(idx[k].normal_index)];
          if (!NormalizeChecked(fn[0], fn[1], fn[2], &n)) {
            n = ng;
            piece.badNormals++;
          }
        }
        float u = 0.0f, v = 0.0f;
        if (idx[k].texcoord_index >= 0) {
          u = attrib_.texcoords[2 * size_t(idx[k].texcoord_index)];
          v = attrib_.texcoords[2 * size_t(idx[k].texcoord_index) + 1];
        }
        scene_.positions[3 * out + size_t(k)] = p[k];
        scene_.normals[3 * out + size_t(k)] = n;
        scene_.uvs[6 * out + 2 * size_t(k)] = u;
        scene_.uvs[6 * out + 2 * size_t(k) + 1] = v;
        piece.lo = Min(piece.lo, p[k]);
        piece.hi = Max(piece.hi, p[k]);
      }
      const int m = Material(piece, f);
      scene_.triMaterial[out++] = m < 0 ? defaultMaterial : m;
    }
  }

 private:
  // Whether the face is an environment portal's: named so (TriangleBlock::IsPortal) and without a textured material
  // (map_Kd). A portal is a bare plane over an opening; a textured face under such a name is a scene's own geometry
  // (Minecraft exports its nether portals' blocks as "g Portal" with the block texture), so it stays geometry.
  bool PortalFace(const FacePiece& piece, size_t f) const {
    if (!blocks_[piece.shape].IsPortal(f)) return false;
    const int m = Material(piece, f);
    return m < 0 || scene_.materials[size_t(m)].texture < 0;
  }

  // The face's material (tinyobjloader's id), or -1 when it has none or one that no MTL defined.
  int Material(const FacePiece& piece, size_t f) const {
    int m = blocks_[piece.shape].materials[f];
    return m < 0 || size_t(m) >= numObjMaterials_ ? -1 : m;
  }

  Scene& scene_;
  const std::string& path_;
  const tinyobj::attrib_t& attrib_;
  const std::vector<TriangleBlock>& blocks_;
  const size_t numObjMaterials_;
  const size_t numV_ = attrib_.vertices.size() / 3, numN_ = attrib_.normals.size() / 3,
               numT_ = attrib_.texcoords.size() / 2;
};

// After the count: each piece's offset in the Scene's arrays, the dropped triangles and their numbers, the grey
// default material appended when a kept face needs it, and the arrays sized. Returns the default material's index,
// or -1.
int PlaceKeptTriangles(Scene& scene, size_t numFaces, std::vector<FacePiece>& pieces) {
  size_t kept = 0;
  bool needsDefault = false;
  for (FacePiece& piece : pieces) {
    piece.firstOut = kept;
    kept += piece.kept;
    needsDefault = needsDefault || piece.needsDefault;
  }
  std::vector<int64_t>& dropped = scene.triangleNumbers.dropped;
  dropped.clear();
  dropped.reserve(numFaces - kept);
  scene.droppedTriangles = 0;
  scene.portals.clear();
  for (FacePiece& piece : pieces) {  // in file order, so the numbers stay ascending
    dropped.insert(dropped.end(), piece.dropped.begin(), piece.dropped.end());
    std::vector<int64_t>().swap(piece.dropped);
    scene.droppedTriangles += piece.degenerate;
    scene.portals.insert(scene.portals.end(), piece.portals.begin(), piece.portals.end());
  }
  const int defaultMaterial = needsDefault ? int(scene.materials.size()) : -1;
  if (needsDefault) {
    HostMaterial grey;  // HostMaterial's defaults: diffuse, Kd 0.5
    grey.name = "default";
    scene.materials.push_back(grey);
  }
  ResizeOnHugePages(scene.positions, 3 * kept);
  ResizeOnHugePages(scene.normals, 3 * kept);
  ResizeOnHugePages(scene.uvs, 6 * kept);
  ResizeOnHugePages(scene.triMaterial, kept);
  return defaultMaterial;
}

// After the writing: the pieces' tallies summed (bad normals, bounds), the warnings, and the check that any
// triangle is left.
void FinishTriangles(Scene& scene, const std::string& path, const std::vector<FacePiece>& pieces) {
  size_t badNormals = 0, texturedPortals = 0;
  Vec3 lo(kInf), hi(-kInf);
  for (const FacePiece& piece : pieces) {
    texturedPortals += piece.texturedPortals;  // in file order: Min and Max keep the later of equal values, as one pass
    badNormals += piece.badNormals;
    lo = Min(lo, piece.lo);
    hi = Max(hi, piece.hi);
  }
  if (scene.droppedTriangles)
    Warn(scene, path, 0,
         "dropped " + std::to_string(scene.droppedTriangles) + " degenerate (zero-area) or non-finite triangles");
  if (texturedPortals)
    Warn(scene, path, 0,
         std::to_string(texturedPortals) +
             " triangles of objects or groups named portal... have a textured material (map_Kd): kept as geometry, "
             "not environment portals (a portal is a bare plane over an opening)");
  if (badNormals)
    Warn(scene, path, 0,
         std::to_string(badNormals) + " vertex normals are zero or not finite; used the face normal instead");
  if (scene.NumTriangles() == 0) Fail(path, 0, scene.portals.empty() ? "no triangles" : "no triangles besides portals");
  const size_t portals = scene.portals.size() / 3;
  if (portals > size_t(kMaxPortalTriangles))
    Fail(path, 0,
         std::to_string(portals) + " portal triangles (faces of objects or groups named portal...); at most " +
             std::to_string(kMaxPortalTriangles) +
             " are supported (every environment sample loops over them): merge coplanar ones into fewer, larger quads");
  scene.boundsMin = lo;
  scene.boundsMax = hi;
}

}  // namespace

std::vector<TriangleBlock> ShapeBlocks(const std::string& path, const std::vector<tinyobj::shape_t>& shapes) {
  std::vector<TriangleBlock> blocks;
  for (const tinyobj::shape_t& shape : shapes) {
    const tinyobj::mesh_t& mesh = shape.mesh;
    if (mesh.indices.size() != 3 * mesh.num_face_vertices.size() ||
        mesh.material_ids.size() != mesh.num_face_vertices.size())
      Fail(path, 0, "internal: tinyobjloader returned a mesh that is not triangulated");
    TriangleBlock block{mesh.indices.data(), mesh.material_ids.data(), mesh.num_face_vertices.size(), shape.name};
    block.portalShape = IsPortalName(shape.name);
    blocks.push_back(block);
  }
  return blocks;
}

void AddTriangles(Scene& scene, const std::string& path, const tinyobj::attrib_t& attrib,
                  const std::vector<TriangleBlock>& blocks, size_t numObjMaterials, ThreadPool& pool) {
  size_t numFaces = 0;
  for (const TriangleBlock& block : blocks) numFaces += block.count;
  std::vector<FacePiece> pieces = CutFacePieces(blocks, numFaces, pool);
  const FaceConverter converter(scene, path, attrib, blocks, numObjMaterials);
  pool.ParallelForEach(pieces.size(), [&](size_t i) { converter.Count(pieces[i]); });
  const int defaultMaterial = PlaceKeptTriangles(scene, numFaces, pieces);
  pool.ParallelForEach(pieces.size(), [&](size_t i) { converter.Write(pieces[i], defaultMaterial); });
  FinishTriangles(scene, path, pieces);
}

}  // namespace tracer::loader

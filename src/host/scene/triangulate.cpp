// @file triangulate.cpp: our parse's polygons cut into triangles as tinyobjloader cuts them, its ear clipping included.
#include "triangulate.h"

#include <algorithm>
#include <charconv>
#include <istream>
#include <string>

#include "scene_text.h"

namespace tracer::loader {
namespace {

// Splits the polygons of more than four corners of one piece exactly as tinyobjloader does (its ear clipping, in the
// library, on the same float positions): their corners' positions are written out as one small OBJ (9 digits: its
// number parser reads them back to the same floats), one face per polygon over vertices of its own, and the
// library's triangles are mapped back to the corners. One LoadObj per piece: one per polygon was too slow
// (docs/PERFORMANCE.md).
class TinyobjEarClipper {
 public:
  TinyobjEarClipper(const std::vector<tinyobj::real_t>& vertices, const ObjPolygons& piece) {
    if (std::none_of(piece.sizes.begin(), piece.sizes.end(), [](uint32_t size) { return size > 4; })) return;
    std::string obj, faces;
    char line[128];
    const tinyobj::index_t* corner = piece.corners.data();
    int written = 0;
    for (const uint32_t size : piece.sizes) {
      if (size > 4) {
        faces += "f";
        for (uint32_t k = 0; k < size; ++k) {
          const tinyobj::real_t* p = &vertices[3 * size_t(corner[k].vertex_index)];
          obj += "v";
          for (int c = 0; c < 3; ++c) {
            // 9 significant digits: within 0.5e-8 of the float, relatively, and its neighbours lie 6e-8 away, far
            // beyond the 1e-16 that tinyobjloader's arithmetic may be off by (17 digits cost it a pow() each).
            line[0] = ' ';
            obj.append(line, std::to_chars(line + 1, line + sizeof line, p[c], std::chars_format::general, 9).ptr);
          }
          obj += "\n";
          faces += " " + std::to_string(++written);
        }
        faces += "\n";
      }
      corner += size;
    }
    if (written == 0) return;
    obj += faces;
    tinyobj::attrib_t attrib;
    std::vector<tinyobj::shape_t> shapes;
    std::string warn, err;
    MemoryBuf buf(obj);
    std::istream stream(&buf);
    if (tinyobj::LoadObj(&attrib, &shapes, nullptr, &warn, &err, &stream, nullptr, /*triangulate=*/true,
                         /*default_vcols_fallback=*/false))
      for (const tinyobj::shape_t& shape : shapes)
        triangles_.insert(triangles_.end(), shape.mesh.indices.begin(), shape.mesh.indices.end());
  }
  // Appends the triangles of the piece's next polygon of more than four corners (n of them, `polygon`).
  void Next(const tinyobj::index_t* polygon, size_t n, std::vector<tinyobj::index_t>* out) {
    const int first = firstVertex_;
    firstVertex_ += static_cast<int>(n);
    // The library's triangles come in face order; a polygon it could not split has none.
    while (cursor_ + 3 <= triangles_.size() && triangles_[cursor_].vertex_index >= first &&
           triangles_[cursor_].vertex_index < firstVertex_) {
      for (int k = 0; k < 3; ++k) out->push_back(polygon[triangles_[cursor_ + k].vertex_index - first]);
      cursor_ += 3;
    }
  }

 private:
  std::vector<tinyobj::index_t> triangles_;  // indices into the small OBJ's vertices
  size_t cursor_ = 0;
  int firstVertex_ = 0;  // the small OBJ's first vertex of the next polygon
};

}  // namespace

ObjTriangles Triangulate(const std::vector<tinyobj::real_t>& v, ObjPolygons& piece,
                         const std::vector<int>& useMaterial) {
  ObjTriangles out;
  const bool allTriangles =
      std::all_of(piece.sizes.begin(), piece.sizes.end(), [](uint32_t size) { return size == 3; });
  if (allTriangles) {
    out.corners = std::move(piece.corners);
  } else {
    out.corners.reserve(piece.corners.size() * 3 / 2);
  }
  TinyobjEarClipper clipper(v, piece);
  out.materials.reserve(allTriangles ? piece.sizes.size() : out.corners.capacity() / 3);
  const tinyobj::index_t* corner = piece.corners.data();
  size_t run = 0, portalRun = 0;
  int material = -1;
  uint8_t portal = 0;
  const bool anyPortal = std::any_of(piece.portals.begin(), piece.portals.end(), [](auto& r) { return r.second != 0; });
  if (anyPortal) out.portals.reserve(out.materials.capacity());
  for (size_t face = 0; face < piece.sizes.size(); ++face) {
    for (; run < piece.uses.size() && piece.uses[run].first == face; ++run)
      material = piece.uses[run].second < 0 ? -1 : useMaterial[size_t(piece.uses[run].second)];
    for (; portalRun < piece.portals.size() && piece.portals[portalRun].first == face; ++portalRun)
      portal = piece.portals[portalRun].second;
    const uint32_t size = piece.sizes[face];
    const size_t before = out.corners.size();
    if (allTriangles) {
      out.materials.push_back(material);
      if (anyPortal) out.portals.push_back(portal);
      continue;
    }
    if (size == 3) {
      out.corners.insert(out.corners.end(), corner, corner + 3);
    } else if (size == 4) {
      auto at = [&](int k, int c) { return v[3 * size_t(corner[k].vertex_index) + size_t(c)]; };
      tinyobj::real_t d02[3], d13[3];
      for (int c = 0; c < 3; ++c) d02[c] = at(2, c) - at(0, c), d13[c] = at(3, c) - at(1, c);
      const tinyobj::real_t sqr02 = d02[0] * d02[0] + d02[1] * d02[1] + d02[2] * d02[2];
      const tinyobj::real_t sqr13 = d13[0] * d13[0] + d13[1] * d13[1] + d13[2] * d13[2];
      static constexpr int kOrder[2][6] = {{0, 1, 2, 0, 2, 3}, {0, 1, 3, 1, 2, 3}};
      for (int k : kOrder[sqr02 < sqr13 ? 0 : 1]) out.corners.push_back(corner[k]);
    } else {
      clipper.Next(corner, size, &out.corners);
    }
    out.materials.insert(out.materials.end(), (out.corners.size() - before) / 3, material);
    if (anyPortal) out.portals.insert(out.portals.end(), (out.corners.size() - before) / 3, portal);
    corner += size;
  }
  if (!allTriangles) std::vector<tinyobj::index_t>().swap(piece.corners);
  std::vector<uint32_t>().swap(piece.sizes);
  return out;
}

}  // namespace tracer::loader

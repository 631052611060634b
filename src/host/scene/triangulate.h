// @file triangulate.h: the polygons of our parse cut into triangles exactly as tinyobjloader cuts them.
#pragma once
#include <tiny_obj_loader.h>

#include <vector>

#include "obj_scan.h"

namespace tracer::loader {

// The triangles of one piece of our parse.
struct ObjTriangles {
  std::vector<tinyobj::index_t> corners;
  std::vector<int> materials;
  std::vector<uint8_t> portals;  // per triangle, 1 where it is a portal's; empty when none is
};

// One piece's polygons as tinyobjloader triangulates them: a triangle as it is; a quad cut along its shorter diagonal
// (its comparison, in float: from corner 0 to 2 when strictly shorter than from 1 to 3, else from 1 to 3); larger
// polygons by tinyobjloader's ear clipping, run on them (TinyobjEarClipper). useMaterial: the material id of each
// usemtl statement. The portal flags follow piece.portals.
ObjTriangles Triangulate(const std::vector<tinyobj::real_t>& v, ObjPolygons& piece,
                         const std::vector<int>& useMaterial);

}  // namespace tracer::loader

// @file triangles.h: the Scene's triangle arrays, written from triangulated faces after one more check of each.
#pragma once
#include <tiny_obj_loader.h>

#include <string>
#include <vector>

#include "tracer/host/scene_loader.h"
#include "tracer/host/thread_pool.h"

namespace tracer::loader {

// Triangles as AddTriangles reads them: 3 corners and a material (tinyobjloader's id, -1 none) per triangle.
struct TriangleBlock {
  const tinyobj::index_t* corners;
  const int* materials;
  size_t count;
  std::string name;                  // tinyobjloader's shape name, for a message
  const uint8_t* portals = nullptr;  // per triangle, 1 where it is an environment portal's; null: none is
  bool portalShape = false;          // every triangle is a portal's (a tinyobjloader shape named portal...)
  bool IsPortal(size_t t) const { return portalShape || (portals && portals[t]); }
};

// tinyobjloader's shapes as blocks, after checking that they are triangulated.
std::vector<TriangleBlock> ShapeBlocks(const std::string& path, const std::vector<tinyobj::shape_t>& shapes);

// Triangles, re-checking every index tinyobjloader returned (defence in depth); portal triangles go to
// scene.portals instead (numbered as dropped, not counted as such); degenerate or non-finite ones are dropped and
// counted (their numbers, the blocks' triangles counted from 0 in order, in Scene::triangleNumbers),
// and faces without a (defined) material get a grey default appended on first use.
// Two passes over pieces of faces: count what each piece keeps, then write each piece from its offset, so that the
// arrays hold the same bytes for any number of threads (one piece on a pool of one thread).
void AddTriangles(Scene& scene, const std::string& path, const tinyobj::attrib_t& attrib,
                  const std::vector<TriangleBlock>& blocks, size_t numObjMaterials, ThreadPool& pool);

}  // namespace tracer::loader

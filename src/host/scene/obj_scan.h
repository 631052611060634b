// @file obj_scan.h: our checks of an OBJ before tinyobjloader may see it, and with them our parse of its geometry.
#pragma once
#include <tiny_obj_loader.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracer/core/math.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/thread_pool.h"

namespace tracer::loader {

// What the checks found that the loading of the materials needs: the mtllib and usemtl statements.
struct ObjScan {
  std::map<std::string, size_t> mtllibLine;            // MTL name as tinyobjloader passes it -> first line naming it
  std::map<std::string, std::string> mtllibWritten;    // the same name -> as written (backslashes kept)
  std::vector<std::pair<size_t, std::string>> usemtl;  // (line, material name)
  std::vector<std::pair<size_t, std::vector<std::string>>> mtllib;  // (line, the names tinyobjloader would try)
};

// The faces of one piece of an OBJ as our parse reads them, before triangulation.
struct ObjPolygons {
  std::vector<tinyobj::index_t> corners;  // every face's corners in file order, resolved to 0-based (-1: none)
  std::vector<uint32_t> sizes;            // corners per face
  // (first face, the usemtl statement in effect from it on: its ordinal in the file, -1 before the first one).
  // The first run starts at face 0 with the statement in effect where the piece begins.
  std::vector<std::pair<size_t, int64_t>> uses;
  // (first face, 1 when the faces from it on are a portal's, else 0), at each o and g statement (IsPortalName). The
  // first run starts at face 0 with the state in effect where the piece begins, which ScanObj fills in.
  std::vector<std::pair<size_t, uint8_t>> portals;
};

// Our parallel parse of an OBJ (the lines tinyobjloader reads for triangles): the vertex records, written by each
// piece at its offset, and each piece's faces.
struct ObjParse {
  tinyobj::attrib_t attrib;  // vertices, normals and texcoords, filled as tinyobjloader fills them
  std::vector<ObjPolygons> pieces;
};

// Checks the OBJ in pieces cut at line ends, in parallel: the lines and vertex records of each piece are counted
// first, so that each piece knows its first line number and the vertices defined before it. The first error in file
// order is thrown, the same as a scan of the whole text (one piece, on a pool of one thread) throws. With `parse`,
// parses it too: vertex records into parse->attrib at their offsets, each piece's faces into parse->pieces.
ObjScan ScanObj(const std::string& path, const std::string& text, const LoadOptions& options, ThreadPool& pool,
                ObjParse* parse = nullptr);

// Whether an o or g statement's name (its first word; leading blanks skipped) makes the faces after it an
// environment portal's: it starts with "portal", in any case ("portal", "Portal.001", "portal_east").
bool IsPortalName(std::string_view name);

// A vertex record of tinyobj::attrib_t (three reals) as a Vec3.
inline Vec3 ToVec3(const tinyobj::real_t* v) { return Vec3(v[0], v[1], v[2]); }

}  // namespace tracer::loader

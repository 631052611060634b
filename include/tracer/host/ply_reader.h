// @file ply_reader.h: triangle meshes from PLY files (Greg Turk's polygon file format, as pbrt-v4's plymesh shape
// reads it: src/pbrt/util/mesh.cpp), ASCII or binary of either byte order, gzip-compressed when named .ply.gz.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tracer {

// A bad or unreadable PLY file. what() reads "file:line: message" for the header and for ASCII data, "file: message"
// for binary data; faces and element items are counted from 0 ("face 3", "element \"vertex\" 3 of 10").
class PlyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PlyMesh {
  std::vector<float> positions;  // x y z per vertex
  std::vector<float> normals;    // nx ny nz per vertex, or empty
  std::vector<float> uvs;  // u v per vertex (also read from s t, texture_u texture_v, texture_s texture_t), or empty
  // 3 per triangle. A quad (a, b, c, d) becomes the triangles (a, b, c) and (a, c, d), as pbrt-v4 splits it.
  std::vector<int32_t> indices;
  std::vector<int32_t> faceIndices;  // face_indices, one per triangle (a quad's two share it), or empty
  size_t skippedFaces = 0;           // faces of other than 3 or 4 vertices, left out (pbrt-v4 warns and skips them)

  size_t NumVertices() const { return positions.size() / 3; }
  size_t NumTriangles() const { return indices.size() / 3; }
};

// Reads the mesh at `path`: the vertex element's x, y, z (required), nx, ny, nz and a uv pair (when all there), and
// the face element's vertex_indices (or vertex_index) lists and face_indices; any other element or property is
// skipped. Property types char..double (int8..float64 too); list counts of any integer type. Throws PlyError for a
// file that cannot be read, a bad header, truncated data, or a vertex index out of range.
PlyMesh ReadPly(const std::string& path);

// The same for a file's bytes already in memory (decompressed); `name` names it in messages.
PlyMesh ParsePly(const std::string& bytes, const std::string& name);

}  // namespace tracer

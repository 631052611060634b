// @file ray_file.h: the ray and hit files that let tracers be compared on identical rays (--trace-rays,
// --dump-rays), and the per-bounce writer of --dump-rays.
//
// A ray file is a sequence of 32-byte little-endian records laid out exactly like RayState (core/ray.h):
// float origin x, y, z, direction x, y, z (need not be normalised), tmax, then uint32 id. A hit file holds one
// 16-byte record per ray, in ray order: float t, b1, b2 (barycentric weights of vertices 1 and 2), int32
// triangle, the triangle's number in the scene file (Scene::triangleNumbers; not the renderer's or the BVH's order),
// so that files from other tracers compare directly. A miss (and a ray that cannot be traced, see RayRecordValid)
// is t = +inf, b1 = b2 = 0, triangle -1.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace tracer {

struct RayRecord {
  float o[3];
  float d[3];
  float tmax;
  uint32_t id;
};
static_assert(sizeof(RayRecord) == 32, "a ray record is 32 bytes, as RayState");

struct HitFileRecord {
  float t, b1, b2;
  int32_t tri;  // the triangle's number in the scene file (docs/FORMATS.md, "Triangle numbers"); -1 for a miss
};
static_assert(sizeof(HitFileRecord) == 16, "a hit record is 16 bytes, as Hit");

// False for a ray that is not traced but reported as a miss: a NaN or infinite origin or direction component,
// a zero direction, or a NaN tmax. (A negative tmax is valid and simply hits nothing.)
bool RayRecordValid(const RayRecord& ray);
// The record of a miss: t = +inf, b1 = b2 = 0, tri = -1.
HitFileRecord MissHitRecord();

// Read a whole file; throw std::runtime_error naming the file when it cannot be read, is empty, or its size
// is not a multiple of the record size. Records with bad values are returned as they are.
std::vector<RayRecord> ReadRayFile(const std::string& path);
std::vector<HitFileRecord> ReadHitFile(const std::string& path);
// Write a whole file atomically (AtomicWriteFile); throw std::runtime_error naming the file on failure.
void WriteRayFile(const std::string& path, const std::vector<RayRecord>& rays);
void WriteHitFile(const std::string& path, const std::vector<HitFileRecord>& hits);

// --dump-rays: appends rays to DIR/bounce-K-extension.bin and DIR/bounce-K-shadow.bin. The folder is created
// if missing; dump files of an earlier run in it are removed first, so that the folder holds one render's
// rays. Each file is truncated on its first append; a
// bounce with no rays of a kind has no file of that kind. Throws std::runtime_error naming the path on failure.
class RayDumpWriter {
 public:
  explicit RayDumpWriter(std::string dir);
  void Append(int bounce, bool shadow, const std::vector<RayRecord>& rays);
  std::string PathOf(int bounce, bool shadow) const;

 private:
  std::string dir_;
  std::set<std::string> started_;
};

}  // namespace tracer

// @file scene_loader.cpp: LoadScene: a pbrt-v4 scene by its name (pbrt_loader.h), else the OBJ, its MTLs, textures
// and camera file, checked and loaded into a Scene.
//
// tinyobjloader 2.0.0rc10 reports no line numbers, turns nan/inf into 0 and passes out-of-range
// negative indices through (CVE-2020-28589). So every file is first read whole (regular files only,
// size-capped) and checked line by line by our scans (the OBJ in pieces cut at line ends, one thread per piece); only
// text that passed goes to tinyobjloader, and the indices it returns are checked once more before they are used.
// The OBJ's geometry is parsed during those checks (its numbers with tinyobjloader's arithmetic, its polygons
// triangulated as tinyobjloader triangulates them), since tinyobjloader's own parse is serial: seconds of a large
// scene's load (docs/PERFORMANCE.md). LoadOptions::tinyobjParse keeps the library's parse as the naive twin; both
// give the same Scene, byte for byte (tests/loader_parse_test.cpp, the fuzzer).
//
// The steps, each in a file of its own beside this one: scene_files (finding and reading files), scene_text
// (lines, tokens, numbers, messages), obj_scan (the OBJ's checks and our parse), mtl_scan and mtl_reader (the
// MTLs), textures, materials, triangulate and triangles (the Scene's arrays), camera_file.
#include "tracer/host/scene_loader.h"

#include <sys/stat.h>
#include <tiny_obj_loader.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <istream>
#include <sstream>

#include "camera_file.h"
#include "materials.h"
#include "mtl_reader.h"
#include "obj_scan.h"
#include "pbrt_loader.h"
#include "scene_files.h"
#include "scene_text.h"
#include "tracer/host/thread_pool.h"
#include "tracer/host/timing.h"
#include "triangles.h"
#include "triangulate.h"

namespace tracer {

using loader::AddMaterials;
using loader::AddTriangles;
using loader::AssetFolders;
using loader::CameraPathFor;
using loader::DirectoryOf;
using loader::Fail;
using loader::GuardedMaterialReader;
using loader::LoadObjMaterials;
using loader::MemoryBuf;
using loader::ObjParse;
using loader::ObjScan;
using loader::ObjTriangles;
using loader::ReadRegularFile;
using loader::RealPath;
using loader::ScanObj;
using loader::ShapeBlocks;
using loader::TriangleBlock;
using loader::Triangulate;
using loader::Warn;

std::string Scene::Summary() const {
  size_t perClass[kNumMaterialClasses] = {};
  size_t emissive = 0, emitterTriangles = 0, mixes = 0;
  for (const HostMaterial& m : materials) {
    if (m.mix)
      ++mixes;
    else
      perClass[m.cls]++;
    emissive += m.IsEmissive();
  }
  for (int32_t m : triMaterial) emitterTriangles += materials[size_t(m)].IsEmissive();
  std::ostringstream ss;
  ss << "scene: " << NumTriangles() << " triangles, " << materials.size() << " materials (" << perClass[kDiffuse]
     << " diffuse, " << perClass[kGlossy] << " glossy, " << perClass[kMirror] << " mirror, " << perClass[kDielectric]
     << " dielectric" << (mixes ? "; " + std::to_string(mixes) + " mixes" : std::string()) << "; " << emissive
     << " emissive), " << emitterTriangles << " emitter triangles";
  if (!deltaLights.empty()) ss << ", " << deltaLights.size() << " point, spot or distant lights";
  if (!portals.empty()) ss << ", " << portals.size() / 3 << " portal triangles of area " << PortalArea();
  return ss.str();
}

bool Scene::HasLight() const {
  if (environment.present || !deltaLights.empty()) return true;
  return std::any_of(triMaterial.begin(), triMaterial.end(),
                     [&](int32_t m) { return materials[size_t(m)].IsEmissive(); });
}

std::string NoLightWarning(const Scene& scene) {
  return scene.path + ": no emitters (" +
         (pbrtload::IsPbrtFileName(scene.path) ? "no emissive shape, no infinite light the renderer can render"
                                               : "no triangle has a material with Ke > 0") +
         "); only an environment can light it: pass --env R,G,B or --env-map FILE.hdr";
}

double Scene::PortalArea() const {
  double area = 0.0;
  for (size_t t = 0; t + 2 < portals.size(); t += 3)
    area += 0.5 * static_cast<double>(Length(Cross(portals[t + 1] - portals[t], portals[t + 2] - portals[t])));
  return area;
}

int64_t TriangleNumbers::FileNumber(int64_t triangle) const {
  // dropped[j] - j numbers were kept below dropped[j], which never falls as j grows: the dropped numbers below the
  // triangle's own are those with dropped[j] - j <= triangle.
  size_t lo = 0, hi = dropped.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (dropped[mid] - static_cast<int64_t>(mid) <= triangle)
      lo = mid + 1;
    else
      hi = mid;
  }
  return triangle + static_cast<int64_t>(lo);
}

int64_t TriangleNumbers::SceneTriangle(int64_t number) const {
  const auto below = std::lower_bound(dropped.begin(), dropped.end(), number);
  if (below != dropped.end() && *below == number) return -1;
  return number - (below - dropped.begin());
}

Scene LoadScene(const std::string& path, const LoadOptions& options) {
  if (pbrtload::IsPbrtFileName(path)) return pbrtload::LoadPbrtScene(path, options);
  Scene scene;
  scene.path = path;
  Stopwatch phase;
  std::string text;
  std::string why = ReadRegularFile(path, options.maxFileBytes, &text);
  if (!why.empty()) Fail(path, 0, why);
  scene.seconds.read = phase.Seconds();
  AssetFolders folders;
  folders.scene = RealPath(DirectoryOf(path));
  if (folders.scene.empty()) Fail(path, 0, "cannot resolve its folder");
  for (const std::string& dir : options.searchPaths) {
    std::string real = RealPath(dir);
    if (real.empty())
      Warn(scene, path, 0, "--texture-path " + dir + ": not found (" + std::strerror(errno) + "); not searched");
    else
      folders.extra.push_back(real);
  }

  // Our checks first, and with them our parse of the numbers and indices (each piece of the text on its own thread);
  // with tinyobjParse, the checks alone, after which tinyobjloader sees only finite numbers and in-range indices.
  phase.Restart();
  ThreadPool pool(ThreadPool::ThreadsFor(options.threads));
  ObjParse parsed;
  ObjScan scan = ScanObj(path, text, options, pool, options.tinyobjParse ? nullptr : &parsed);
  scene.seconds.validate = phase.Seconds();

  tinyobj::attrib_t tinyAttrib;
  std::vector<tinyobj::shape_t> shapes;
  std::vector<ObjTriangles> triangles;
  std::vector<TriangleBlock> blocks;
  std::vector<tinyobj::material_t> objMaterials;
  phase.Restart();
  GuardedMaterialReader reader(scene, folders, scan, options);
  if (options.tinyobjParse) {
    std::string tinyWarn, tinyErr;  // its warnings repeat what our passes report, with lines; not shown
    MemoryBuf buf(text);
    std::istream stream(&buf);
    bool ok = tinyobj::LoadObj(&tinyAttrib, &shapes, &objMaterials, &tinyWarn, &tinyErr, &stream, &reader,
                               /*triangulate=*/true, /*default_vcols_fallback=*/false);
    reader.RethrowPending();
    if (!ok) Fail(path, 0, "tinyobjloader: " + tinyErr);
    blocks = ShapeBlocks(path, shapes);
  } else {
    const std::vector<int> useMaterial = LoadObjMaterials(scan, reader, &objMaterials);
    reader.RethrowPending();
    triangles.resize(parsed.pieces.size());
    pool.ParallelForEach(parsed.pieces.size(), [&](size_t i) {
      triangles[i] = Triangulate(parsed.attrib.vertices, parsed.pieces[i], useMaterial);
    });
    for (const ObjTriangles& t : triangles) {
      blocks.push_back({t.corners.data(), t.materials.data(), t.materials.size(), ""});
      if (!t.portals.empty()) blocks.back().portals = t.portals.data();
    }
  }
  std::string().swap(text);  // the OBJ's text is not needed any more
  scene.seconds.parse = phase.Seconds();

  phase.Restart();
  AddMaterials(scene, path, folders, objMaterials, reader, scan, options);
  AddTriangles(scene, path, options.tinyobjParse ? tinyAttrib : parsed.attrib, blocks, objMaterials.size(), pool);

  scene.seconds.convert = phase.Seconds();

  std::string cameraPath = CameraPathFor(path);
  struct stat st;
  if (stat(cameraPath.c_str(), &st) == 0) scene.camera = LoadCameraFile(cameraPath);
  return scene;
}

SceneDefaults ReadSceneDefaults(const std::string& path) {
  return pbrtload::IsPbrtFileName(path) ? pbrtload::ReadPbrtDefaults(path) : SceneDefaults{};
}

}  // namespace tracer

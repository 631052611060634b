// @file loader_fuzz.cpp: libFuzzer target on the scene loader (tracer::LoadScene), built by src/scripts/fuzz.
//
// One input is up to three files: the OBJ, then optionally after a line "#MTL" the MTL (f.mtl), then
// optionally after a line "#CAMERA" the camera file (f.camera). They are written into a private temporary
// folder as f.obj, f.mtl and f.camera; a part the input lacks is removed, so every input reproduces alone.
// A SceneError is the loader saying no, and fine. Anything else is a finding: a crash or sanitizer report,
// any other exception (it escapes and aborts), or a loaded scene that breaks the loader's promises (bounds
// finite, indices in range, arrays the right length, the same triangles as tinyobjloader's parse), which traps.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "tracer/host/scene_loader.h"

namespace {

const std::string& Folder() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string t = std::string(tmp && *tmp ? tmp : "/tmp") + "/tracer_fuzz_XXXXXX";
    if (!mkdtemp(t.data())) std::abort();
    return t;
  }();
  return dir;
}

void Put(const std::string& path, std::string_view bytes, bool present) {
  if (!present) {
    std::remove(path.c_str());
    return;
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) std::abort();
  std::fclose(f);
}

// Splits at the first line that is exactly `marker` (followed by \n or \r\n); false when there is none.
bool SplitAt(std::string_view all, std::string_view marker, std::string_view* before, std::string_view* after) {
  for (size_t at = 0; (at = all.find(marker, at)) != std::string_view::npos; at += marker.size()) {
    if (at != 0 && all[at - 1] != '\n') continue;
    size_t end = at + marker.size();
    if (end < all.size() && all[end] == '\r') ++end;
    if (end < all.size() && all[end] != '\n') continue;
    *before = all.substr(0, at);
    *after = end < all.size() ? all.substr(end + 1) : std::string_view();
    return true;
  }
  return false;
}

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "loader_fuzz: broken promise: %s\n", what);
    __builtin_trap();
  }
}

template <typename T>
bool SameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

bool Finite(tracer::Vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  std::string_view obj = all, mtl, camera, rest;
  bool haveMtl = false, haveCamera = false;
  if (SplitAt(all, "#MTL", &obj, &rest)) {
    haveMtl = true;
    mtl = rest;
    haveCamera = SplitAt(rest, "#CAMERA", &mtl, &camera);
  } else {
    haveCamera = SplitAt(all, "#CAMERA", &obj, &camera);
  }
  const std::string& dir = Folder();
  Put(dir + "/f.obj", obj, true);
  Put(dir + "/f.mtl", mtl, haveMtl);
  Put(dir + "/f.camera", camera, haveCamera);

  tracer::Scene scene;
  try {
    scene = tracer::LoadScene(dir + "/f.obj");
  } catch (const tracer::SceneError&) {
    return 0;  // refused with a message: the intended answer to bad input
  }

  // What the renderer relies on.
  const size_t n = scene.NumTriangles();
  Check(n > 0, "a scene without triangles loaded");
  Check(scene.positions.size() == 3 * n && scene.normals.size() == 3 * n && scene.uvs.size() == 6 * n,
        "per-vertex arrays do not match the triangle count");
  for (size_t i = 0; i < scene.positions.size(); ++i) {
    Check(Finite(scene.positions[i]), "non-finite position");
    Check(Finite(scene.normals[i]), "non-finite normal");
    float len2 = scene.normals[i].x * scene.normals[i].x + scene.normals[i].y * scene.normals[i].y +
                 scene.normals[i].z * scene.normals[i].z;
    Check(std::fabs(len2 - 1.0f) < 1e-3f, "normal not unit length");
  }
  for (float uv : scene.uvs) Check(std::isfinite(uv), "non-finite uv");
  // Hit files name triangles by these numbers: one per dropped or portal triangle, ascending, none past the last
  // triangle made.
  const std::vector<int64_t>& dropped = scene.triangleNumbers.dropped;
  Check(scene.portals.size() % 3 == 0, "portal corners are not 3 per triangle");
  Check(dropped.size() == scene.droppedTriangles + scene.portals.size() / 3,
        "dropped triangle numbers do not match the count dropped and the portals");
  for (size_t i = 0; i < dropped.size(); ++i)
    Check(dropped[i] >= 0 && (i == 0 || dropped[i] > dropped[i - 1]) &&
              dropped[i] < static_cast<int64_t>(n + dropped.size()),
          "dropped triangle numbers out of order or out of range");
  Check(Finite(scene.boundsMin) && Finite(scene.boundsMax), "non-finite scene bounds");
  for (int32_t m : scene.triMaterial)
    Check(m >= 0 && size_t(m) < scene.materials.size(), "material index out of range");
  for (const tracer::HostMaterial& m : scene.materials) {
    Check(Finite(m.kd) && Finite(m.ks) && Finite(m.ke), "non-finite material colour");
    Check(m.ke.x >= 0 && m.ke.y >= 0 && m.ke.z >= 0, "negative emission");
    Check(std::isfinite(m.alpha) && std::isfinite(m.ior) && m.ior > 0.0f, "bad roughness or index of refraction");
    for (int t : {m.texture, m.specularTexture, m.roughnessTexture, m.opacityTexture})
      Check(t >= -1 && t < int(scene.textureMaps.size()), "texture index out of range");
    Check(m.opacity >= 0.0f && m.opacity <= 1.0f, "opacity outside [0, 1]");
  }
  for (const tracer::TextureMap& map : scene.textureMaps) {
    Check(map.texture >= 0 && size_t(map.texture) < scene.textures.size(), "texture map names no image");
    const tracer::TextureOptions& o = map.options;
    for (float v : {o.scale[0], o.scale[1], o.offset[0], o.offset[1], o.base, o.gain, o.bumpMultiplier})
      Check(std::isfinite(v), "non-finite texture option");
  }
  // Our parse against its naive twin, tinyobjloader's: the same triangles, bit for bit. tinyobjloader may refuse
  // what our checks pass (it fails on an 'l' or 'p' line with a bad index, which we ignore), never the reverse.
  tracer::LoadOptions tinyobj;
  tinyobj.tinyobjParse = true;
  try {
    const tracer::Scene reference = tracer::LoadScene(dir + "/f.obj", tinyobj);
    Check(SameBytes(scene.positions, reference.positions) && SameBytes(scene.normals, reference.normals) &&
              SameBytes(scene.uvs, reference.uvs) && SameBytes(scene.triMaterial, reference.triMaterial) &&
              SameBytes(scene.triangleNumbers.dropped, reference.triangleNumbers.dropped),
          "our parse and tinyobjloader's give different triangles or triangle numbers");
  } catch (const tracer::SceneError& e) {
    Check(std::string_view(e.what()).find("tinyobjloader: ") != std::string_view::npos,
          "tinyobjloader's parse refused, with our message, a file ours loaded");
  }
  if (scene.camera.valid) {
    Check(Finite(scene.camera.eye) && Finite(scene.camera.lookAt) && Finite(scene.camera.up), "non-finite camera");
    Check(scene.camera.fovY > 0.0f && scene.camera.fovY < 180.0f, "camera fov out of range");
  }
  return 0;
}

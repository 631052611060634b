// @file pbrt_loader_shapes.cpp: pbrt-v4 shapes into the Scene's triangles (see pbrt_loader_shapes.h). Shape
// parameters, defaults and orientation rules are pbrt-v4's (src/pbrt/shapes.h, shapes.cpp, util/mesh.cpp).
#include "pbrt_loader_shapes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>

#include "pbrt_loader_spectra.h"
#include "tracer/host/ply_reader.h"

namespace tracer::pbrtload {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSagitta = 1e-4;  // tessellation: the largest chord sagitta, relative to the scene's diagonal

// How pbrt-v4 orients a shape's surface normal n, the side an area light emits to and a dielectric's outside:
//  - triangles and bilinear patches without normals: the winding's normal (p1 - p0) x (p2 - p0) of the world-space
//    vertices, flipped when ReverseOrientation xor the transform swaps handedness (Triangle::Sample, shapes.h);
//  - with normals "N": the winding's normal turned to the side of the interpolated N (FaceForward), where N is
//    transformed as a normal and negated under ReverseOrientation (TriangleMesh's constructor, util/mesh.cpp);
//  - spheres and disks: cross(dp/du, dp/dv) in world space, flipped under ReverseOrientation alone (the flip for a
//    handedness-swapping transform in SurfaceInteraction cancels the one the transform makes).
enum class Facing { kWinding, kFlipped, kNormals };

// A shape's triangles before they join the Scene: world-space vertices, 3 indices per triangle.
struct WorldMesh {
  std::vector<Vec3> p, n;  // n: one per vertex, or empty (face normals)
  std::vector<float> uv;   // 2 per vertex, or empty: pbrt's default per triangle, (0,0) (1,0) (1,1)
  std::vector<int32_t> index;
  Facing facing = Facing::kWinding;
  int trianglesPerPrimitive = 1;  // what pbrt-v4 makes one shape (and one light) of: 1, 2 (a patch), or all
  double primitiveArea = 0.0;     // for trianglesPerPrimitive 0 (all): pbrt's Shape::Area() of the whole
  double emissionScale = 1.0;     // true area / tessellated area: a tessellated emitter keeps pbrt's power
};

// An area light as the renderer emits it: radiance l (times a TextureMap's texel), or with "power", the radiance
// that makes each primitive emit it: l * power / (k * area).
struct Emission {
  bool on = false;
  Vec3 l{0.0f, 0.0f, 0.0f};
  int map = -1;
  double power = -1.0;
  double k = kPi;  // pi, times 2 when two-sided, times an image's mean luminance (pbrt-v4's k_e before the area)
  bool twoSided = false;
};

// A cut-out: the probability that a ray stops (HostMaterial::opacity) and its texture.
struct Alpha {
  float opacity = 1.0f;
  int map = -1;
};

Vec3 TriangleNormal(Vec3 a, Vec3 b, Vec3 c) { return Cross(b - a, c - a); }

// The mesh's vertices, normals and uvs through objectToWorld.
void TransformMesh(const PbrtTransform& toWorld, bool reverse, WorldMesh& mesh) {
  for (Vec3& p : mesh.p) p = ToVec3(toWorld.ApplyPoint({p.x, p.y, p.z}));
  for (Vec3& n : mesh.n) {
    n = ToVec3(toWorld.ApplyNormal({n.x, n.y, n.z}));
    if (reverse) n = -n;
  }
}

// Reads floats of a point/normal parameter into vectors; false when the count is not a multiple of 3.
std::vector<Vec3> Vec3s(const std::vector<double>& f) {
  std::vector<Vec3> out(f.size() / 3);
  for (size_t i = 0; i < out.size(); ++i) out[i] = Vec3(float(f[3 * i]), float(f[3 * i + 1]), float(f[3 * i + 2]));
  return out;
}

class ShapeBuilder {
 public:
  ShapeBuilder(PbrtLoad& load, PbrtMaterials& materials, PbrtTextures& textures)
      : load_(load), materials_(materials), textures_(textures) {}
  void Add(const PbrtWorldShape& ws);
  void Finish();

 private:
  bool MeshFromParams(const PbrtShape& s, WorldMesh& mesh);
  bool MeshFromPly(const PbrtShape& s, WorldMesh& mesh);
  bool BilinearMesh(const PbrtShape& s, WorldMesh& mesh);
  void Tessellate(const PbrtWorldShape& ws, double diagonal);
  Emission EmissionOf(const PbrtWorldShape& ws, int material);
  Alpha AlphaOf(const PbrtShape& s);
  // The Scene's material for a pbrt material with this emission (one- or two-sided) and cut-out (one per combination);
  // depth counts the mixes around it.
  int MaterialFor(int pbrtMaterial, Vec3 ke, int emissionMap, bool twoSided, const Alpha& alpha, int depth = 0);
  void Emit(const PbrtWorldShape& ws, const WorldMesh& mesh);
  void Grow(Vec3 p) { lo_ = Min(lo_, p), hi_ = Max(hi_, p); }

  PbrtLoad& load_;
  PbrtMaterials& materials_;
  PbrtTextures& textures_;
  std::vector<PbrtWorldShape> quadrics_;  // spheres and disks, tessellated once the scene's size is known
  std::map<std::tuple<int, float, float, float, int, bool, float, int>, int> variants_;
  std::map<const PbrtShape*, Alpha> alphas_;
  Vec3 lo_{kInf, kInf, kInf}, hi_{-kInf, -kInf, -kInf};
  size_t badNormals_ = 0, skipped_ = 0;
  int64_t nextNumber_ = 0;  // the file's number (TriangleNumbers) of the next triangle Emit is given
};

bool ShapeBuilder::MeshFromParams(const PbrtShape& s, WorldMesh& mesh) {
  // Triangle::CreateMesh: "P", "indices" (optional for a single triangle), "N" and "uv" per vertex.
  mesh.p = Vec3s(s.params.GetFloats("P"));
  std::vector<int32_t> index = s.params.GetInts("indices");
  if (index.empty() && mesh.p.size() == 3) index = {0, 1, 2};
  if (mesh.p.empty() || index.empty() || index.size() % 3 != 0) {
    load_.Warn(s.loc, "trianglemesh: needs \"point3 P\" and \"integer indices\" (a multiple of 3); left out");
    return false;
  }
  mesh.index = std::move(index);
  mesh.n = Vec3s(s.params.GetFloats("N"));
  const std::vector<double> uv = s.params.GetFloats("uv");
  mesh.uv.assign(uv.begin(), uv.end());
  return true;
}

bool ShapeBuilder::MeshFromPly(const PbrtShape& s, WorldMesh& mesh) {
  const std::string file = s.params.GetString("filename", "");
  if (file.empty()) {
    load_.Warn(s.loc, "plymesh: no \"filename\"; left out");
    return false;
  }
  PlyMesh ply;
  std::string resolved, bytes;
  const std::string why = loader::ReadSceneAsset(load_.folders, {file}, load_.options, &resolved, &bytes);
  if (!why.empty()) throw SceneError(s.loc.ToString() + ": plymesh \"" + file + "\": " + why);
  try {
    const bool gz = resolved.size() > 3 && resolved.compare(resolved.size() - 3, 3, ".gz") == 0;
    ply = gz ? ReadPly(resolved) : ParsePly(bytes, resolved);
  } catch (const std::exception& e) {
    throw SceneError(s.loc.ToString() + ": plymesh \"" + file + "\": " + e.what());
  }
  if (ply.skippedFaces)
    load_.Warn(s.loc, "plymesh \"" + file + "\": " + std::to_string(ply.skippedFaces) +
                          " faces of other than 3 or 4 vertices left out (as pbrt-v4 does)");
  if (s.params.Has("displacement"))
    load_.WarnKind("ply-displacement", s.loc, "plymesh \"" + file + "\": \"displacement\" is not supported yet");
  for (size_t i = 0; i < ply.positions.size(); i += 3)
    mesh.p.emplace_back(ply.positions[i], ply.positions[i + 1], ply.positions[i + 2]);
  for (size_t i = 0; i < ply.normals.size(); i += 3)
    mesh.n.emplace_back(ply.normals[i], ply.normals[i + 1], ply.normals[i + 2]);
  mesh.uv = std::move(ply.uvs);
  mesh.index = std::move(ply.indices);
  return true;
}

bool ShapeBuilder::BilinearMesh(const PbrtShape& s, WorldMesh& mesh) {
  // BilinearPatch::CreateMesh: 4 indices per patch, p00 p10 p01 p11; each patch is two triangles (p00 p10 p11) and
  // (p00 p11 p01), whose winding is the patch's dp/du x dp/dv; uvs default to the corners (0,0) (1,0) (0,1) (1,1).
  mesh.p = Vec3s(s.params.GetFloats("P"));
  std::vector<int32_t> quad = s.params.GetInts("indices");
  if (quad.empty() && mesh.p.size() == 4) quad = {0, 1, 2, 3};
  if (mesh.p.empty() || quad.empty() || quad.size() % 4 != 0) {
    load_.Warn(s.loc, "bilinearmesh: needs \"point3 P\" and \"integer indices\" (a multiple of 4); left out");
    return false;
  }
  mesh.n = Vec3s(s.params.GetFloats("N"));
  const std::vector<double> uv = s.params.GetFloats("uv");
  std::vector<Vec3> p, n;
  for (size_t q = 0; q < quad.size(); q += 4) {  // each patch its own 4 vertices, for the default uvs
    const float corner[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    for (int c = 0; c < 4; ++c) {
      const size_t v = size_t(quad[q + size_t(c)]);
      if (v >= mesh.p.size()) {
        load_.Warn(s.loc, "bilinearmesh: vertex index " + std::to_string(v) + " out of range; left out");
        return false;
      }
      p.push_back(mesh.p[v]);
      if (mesh.n.size() == mesh.p.size()) n.push_back(mesh.n[v]);
      const bool hasUv = uv.size() == 2 * mesh.p.size();
      mesh.uv.push_back(hasUv ? float(uv[2 * v]) : corner[c][0]);
      mesh.uv.push_back(hasUv ? float(uv[2 * v + 1]) : corner[c][1]);
    }
    const int32_t b = int32_t(p.size()) - 4;
    mesh.index.insert(mesh.index.end(), {b, b + 1, b + 3, b, b + 3, b + 2});
  }
  mesh.p = std::move(p);
  mesh.n = std::move(n);
  mesh.trianglesPerPrimitive = 2;
  return true;
}

void ShapeBuilder::Add(const PbrtWorldShape& ws) {
  const PbrtShape& s = *ws.shape;
  if (materials_.Get(s.material).interface) {
    ++skipped_;
    return;
  }
  if (s.type == "sphere" || s.type == "disk") {
    quadrics_.push_back(ws);
    for (double z : {-1.0, 1.0})  // their bounds, for the tessellation's scale
      for (double y : {-1.0, 1.0})
        for (double x : {-1.0, 1.0}) {
          const double r = s.params.GetFloat("radius", 1.0);
          const double h = s.type == "disk" ? s.params.GetFloat("height", 0.0) : z * r;
          Grow(ToVec3(ws.objectToWorld.ApplyPoint({x * r, y * r, h})));
        }
    return;
  }
  WorldMesh mesh;
  bool ok = false;
  if (s.type == "trianglemesh")
    ok = MeshFromParams(s, mesh);
  else if (s.type == "plymesh")
    ok = MeshFromPly(s, mesh);
  else if (s.type == "bilinearmesh")
    ok = BilinearMesh(s, mesh);
  else
    load_.WarnKind("shape:" + s.type, s.loc,
                   "shape \"" + s.type +
                       "\" is not rendered yet (trianglemesh, plymesh, bilinearmesh, sphere and disk are); left out");
  if (!ok) return;
  for (int32_t i : mesh.index)
    if (i < 0 || size_t(i) >= mesh.p.size()) {
      load_.Warn(s.loc, s.type + ": vertex index " + std::to_string(i) + " out of range; left out");
      return;
    }
  if (!mesh.n.empty() && mesh.n.size() != mesh.p.size()) mesh.n.clear();  // pbrt-v4 discards them too
  if (!mesh.uv.empty() && mesh.uv.size() != 2 * mesh.p.size()) mesh.uv.clear();
  TransformMesh(ws.objectToWorld, s.reverseOrientation, mesh);
  mesh.facing = !mesh.n.empty()                                                ? Facing::kNormals
                : (s.reverseOrientation != ws.objectToWorld.SwapsHandedness()) ? Facing::kFlipped
                                                                               : Facing::kWinding;
  Emit(ws, mesh);
}

// ---- spheres and disks -----------------------------------------------------------------------------------
// Sphere: "radius" 1, "zmin" -radius, "zmax" radius, "phimax" 360; disk: "height" 0, "radius" 1, "innerradius" 0,
// "phimax" 360 (Sphere::Create, Disk::Create), clamped as their constructors clamp them.
struct Quadric {
  bool disk = false;
  double r = 1.0, zMin = -1.0, zMax = 1.0, phiMax = 2.0 * kPi, height = 0.0, ri = 0.0;

  static Quadric Of(const PbrtShape& s) {
    Quadric q;
    q.disk = s.type == "disk";
    q.r = s.params.GetFloat("radius", 1.0);
    q.phiMax = std::clamp(s.params.GetFloat("phimax", 360.0), 0.0, 360.0) * kPi / 180.0;
    if (q.disk) {
      q.height = s.params.GetFloat("height", 0.0);
      q.ri = s.params.GetFloat("innerradius", 0.0);
    } else {
      const double z0 = s.params.GetFloat("zmin", -q.r), z1 = s.params.GetFloat("zmax", q.r);
      q.zMin = std::clamp(std::min(z0, z1), -q.r, q.r);
      q.zMax = std::clamp(std::max(z0, z1), -q.r, q.r);
    }
    return q;
  }
  // pbrt-v4's Shape::Area(), in object space (what its "power" normalisation uses).
  double ObjectArea() const { return disk ? 0.5 * phiMax * (r * r - ri * ri) : phiMax * r * (zMax - zMin); }
  // n segments around a full circle: a grid in pbrt's (u, v), triangles in (u, v) order, whose winding is then
  // dp/du x dp/dv (outwards for a sphere, +z for a disk). Object space; normals are the analytic ones.
  WorldMesh Tessellate(int n) const {
    WorldMesh m;
    const double thetaMin = std::acos(std::clamp(zMin / r, -1.0, 1.0));  // pbrt's thetaZMin, at v = 0
    const double thetaMax = std::acos(std::clamp(zMax / r, -1.0, 1.0));
    const int nu = std::max(3, int(std::ceil(n * phiMax / (2.0 * kPi))));
    const int nv = disk ? 1 : std::max(2, int(std::ceil(0.5 * n * (thetaMin - thetaMax) / kPi)));
    for (int j = 0; j <= nv; ++j)
      for (int i = 0; i <= nu; ++i) {
        const double u = double(i) / nu, v = double(j) / nv, phi = u * phiMax;
        if (disk) {
          const double rr = r - v * (r - ri);  // pbrt's v = (radius - r) / (radius - innerradius)
          m.p.emplace_back(float(rr * std::cos(phi)), float(rr * std::sin(phi)), float(height));
          m.n.emplace_back(0.0f, 0.0f, 1.0f);
        } else {
          const double theta = thetaMin + v * (thetaMax - thetaMin);
          const Vec3 d(float(std::sin(theta) * std::cos(phi)), float(std::sin(theta) * std::sin(phi)),
                       float(std::cos(theta)));
          m.p.push_back(d * float(r));
          m.n.push_back(d);
        }
        m.uv.push_back(float(u));
        m.uv.push_back(float(v));
      }
    for (int j = 0; j < nv; ++j)
      for (int i = 0; i < nu; ++i) {
        const int32_t a = j * (nu + 1) + i, b = a + 1, c = b + nu + 1, d = a + nu + 1;
        m.index.insert(m.index.end(), {a, b, c, a, c, d});
      }
    m.trianglesPerPrimitive = 0;
    m.primitiveArea = ObjectArea();
    return m;
  }
};

// The world area of triangles [first, last) of a mesh.
double RangeArea(const WorldMesh& m, size_t first, size_t last) {
  double area = 0.0;
  for (size_t t = first; t < last; ++t)
    area += 0.5 * double(Length(TriangleNormal(m.p[size_t(m.index[3 * t])], m.p[size_t(m.index[3 * t + 1])],
                                               m.p[size_t(m.index[3 * t + 2])])));
  return area;
}
double WorldArea(const WorldMesh& m) { return RangeArea(m, 0, m.index.size() / 3); }

// The area scale of a transform's 3x3 part when it is a similarity (orthogonal columns of equal length), else 0.
double SimilarityAreaScale(const PbrtTransform& t) {
  double c[3][3];
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) c[j][i] = t.m[i][j];
  auto dot = [&](int a, int b) { return c[a][0] * c[b][0] + c[a][1] * c[b][1] + c[a][2] * c[b][2]; };
  const double s2 = dot(0, 0);
  for (int a = 0; a < 3; ++a)
    for (int b = a; b < 3; ++b)
      if (std::fabs(dot(a, b) - (a == b ? s2 : 0.0)) > 1e-9 * s2) return 0.0;
  return s2;
}

void ShapeBuilder::Tessellate(const PbrtWorldShape& ws, double diagonal) {
  const PbrtShape& s = *ws.shape;
  const Quadric q = Quadric::Of(s);
  if (!(q.r > 0.0) || !(q.phiMax > 0.0) || (!q.disk && !(q.zMax > q.zMin)) || (q.disk && !(q.r > q.ri))) {
    load_.Warn(s.loc, s.type + ": empty (radius, zmin/zmax, innerradius or phimax); left out");
    return;
  }
  const PbrtTransform& toWorld = ws.objectToWorld;
  double stretch = 0.0;  // the transform's largest column length: the radius it can reach in the world
  for (int j = 0; j < 3; ++j)
    stretch = std::max(stretch, std::sqrt(toWorld.m[0][j] * toWorld.m[0][j] + toWorld.m[1][j] * toWorld.m[1][j] +
                                          toWorld.m[2][j] * toWorld.m[2][j]));
  const int n = CircleSegments(q.r * stretch, diagonal);
  auto toWorldMesh = [&](int segments) {
    WorldMesh m = q.Tessellate(segments);
    const bool flip = s.reverseOrientation != toWorld.SwapsHandedness();  // pbrt's flipNormal, on the normals
    for (Vec3& p : m.p) p = ToVec3(toWorld.ApplyPoint({p.x, p.y, p.z}));
    for (Vec3& v : m.n) v = ToVec3(toWorld.ApplyNormal({v.x, v.y, v.z})) * (flip ? -1.0f : 1.0f);
    m.facing = s.reverseOrientation ? Facing::kFlipped : Facing::kWinding;
    return m;
  };
  WorldMesh mesh = toWorldMesh(n);
  // The true world area: exact under a similarity, else Richardson's extrapolation of the tessellated areas at n and
  // 2n segments (their error falls as 1/n^2). An emitter's radiance is scaled by true / tessellated area, so that
  // it emits the power the analytic shape would.
  const double tessellated = WorldArea(mesh), s2 = SimilarityAreaScale(toWorld);
  const double exact = s2 > 0.0 ? q.ObjectArea() * s2 : (4.0 * WorldArea(toWorldMesh(2 * n)) - tessellated) / 3.0;
  mesh.emissionScale = tessellated > 0.0 ? exact / tessellated : 1.0;
  Emit(ws, mesh);
}

// ---- materials per shape: emission and cut-outs -------------------------------------------------------------
Emission ShapeBuilder::EmissionOf(const PbrtWorldShape& ws, int material) {
  const PbrtShape& s = *ws.shape;
  Emission e;
  // pbrt-v4 ignores area lights in object instances (the parser warned) and on "interface" shapes (left out).
  if (s.areaLight < 0 || ws.instance >= 0 || materials_.Get(material).interface) return e;
  const PbrtEntity& light = load_.pbrt.areaLights[size_t(s.areaLight)];
  if (light.type != "diffuse") {
    load_.WarnKind(
        "arealight:" + light.type, light.loc,
        "AreaLightSource \"" + light.type + "\" is not rendered yet (\"diffuse\" is); its shapes do not emit");
    return e;
  }
  // DiffuseAreaLight::Create (lights.cpp): L (default: the colour space's illuminant, white), scale, twosided,
  // filename (an image instead of L), power.
  Vec3 l(1.0f);
  SpectrumRgb(load_, light.params, "L", SpectrumUse::kIlluminant, &l);
  if (light.colorSpace != "srgb")
    load_.WarnKind("colorspace", light.loc,
                   "colour space \"" + light.colorSpace + "\" is not supported yet; its RGB values are used as sRGB");
  if (light.params.GetBool("twosided", false)) {  // L on both sides: twice the power ("power" halves L)
    e.k *= 2.0;
    e.twoSided = true;
  }
  const std::string file = light.params.GetString("filename", "");
  if (!file.empty()) {
    e.map = textures_.ImageMap(file, ImageRead(), light.loc, "AreaLightSource \"filename\"");
    if (e.map >= 0) {
      l = Vec3(1.0f);
      const auto mean = MeanTexel(load_.scene.textures[size_t(load_.scene.textureMaps[size_t(e.map)].texture)]);
      e.k *= double(Luminance(Vec3(float(mean[0]), float(mean[1]), float(mean[2]))));
    }
  }
  e.l = l * float(light.params.GetFloat("scale", 1.0));
  e.power = light.params.GetFloat("power", -1.0);
  e.on = MaxComponent(e.l) > 0.0f;
  return e;
}

Alpha ShapeBuilder::AlphaOf(const PbrtShape& s) {
  auto known = alphas_.find(&s);
  if (known != alphas_.end()) return known->second;
  // A shape's "alpha" (float or float texture): pbrt-v4 ignores a hit with probability 1 - alpha, as the
  // renderer's cut-out test does with a material's opacity.
  Alpha a;
  MappedTexture t;
  if (s.params.Has("alpha") && textures_.Float(s.params, "alpha", &t)) {
    a.opacity = Clamp(t.factor.x, 0.0f, 1.0f);
    a.map = t.map;
  }
  return alphas_[&s] = a;
}

int ShapeBuilder::MaterialFor(int pbrtMaterial, Vec3 ke, int emissionMap, bool twoSided, const Alpha& alpha,
                              int depth) {
  const auto key = std::make_tuple(pbrtMaterial, ke.x, ke.y, ke.z, emissionMap, twoSided, alpha.opacity, alpha.map);
  auto known = variants_.find(key);
  if (known != variants_.end()) return known->second;
  const MappedMaterial& mapped = materials_.Get(pbrtMaterial);
  HostMaterial m = mapped.material;
  if (m.mix) {
    // The two materials of a mix, plain (no emission, no cut-out: the mix's own apply), each once.
    const PbrtMaterial& source = load_.pbrt.materials[size_t(pbrtMaterial)];
    for (int* part : {&m.mixA, &m.mixB}) {
      // The renderer resolves kMaxMixDepth levels (ResolveMix): a mix at the last level has plain parts.
      const MappedMaterial& inner = materials_.Get(*part);
      const bool skip = inner.interface, deep = inner.material.mix && depth + 1 >= kMaxMixDepth;
      if (skip || deep) {
        load_.WarnKind(skip ? "mix-interface" : "mix-depth", source.loc,
                       "material \"" + source.name + "\" (mix): " +
                           (skip ? "a part that is an \"interface\" is not supported"
                                 : "mixes nest more than " + std::to_string(kMaxMixDepth) + " deep (a cycle?)") +
                           "; a grey diffuse takes its place");
        HostMaterial grey;
        grey.name = "grey@" + source.loc.ToString();
        *part = int(load_.scene.materials.size());
        load_.scene.materials.push_back(grey);
      } else {
        *part = MaterialFor(*part, Vec3(0.0f), -1, false, Alpha{}, depth + 1);
      }
    }
  }
  m.ke = ke;
  m.emissionTexture = emissionMap;
  m.twoSided = twoSided;
  m.opacity = alpha.opacity;
  m.opacityTexture = alpha.map;
  const int index = int(load_.scene.materials.size());
  load_.scene.materials.push_back(std::move(m));
  variants_.emplace(key, index);
  return index;
}

// ---- the Scene's arrays -------------------------------------------------------------------------------------
void ShapeBuilder::Emit(const PbrtWorldShape& ws, const WorldMesh& mesh) {
  const PbrtShape& s = *ws.shape;
  const Emission e = EmissionOf(ws, s.material);
  const Alpha alpha = AlphaOf(s);
  Scene& scene = load_.scene;
  const size_t triangles = mesh.index.size() / 3;
  const size_t group = mesh.trianglesPerPrimitive > 0 ? size_t(mesh.trianglesPerPrimitive) : triangles;
  for (size_t first = 0; first < triangles; first += group) {
    const size_t last = std::min(triangles, first + group);
    Vec3 ke(0.0f);
    if (e.on) {
      double scale = mesh.emissionScale;
      if (e.power > 0.0) {  // each pbrt primitive emits "power": its radiance is power / (k area)
        const double area = mesh.trianglesPerPrimitive > 0 ? RangeArea(mesh, first, last) : mesh.primitiveArea;
        scale *= area > 0.0 ? e.power / (e.k * area) : 0.0;
      }
      ke = e.l * float(scale);
    }
    const int material = MaterialFor(s.material, ke, e.on ? e.map : -1, e.on && e.twoSided, alpha);
    for (size_t t = first; t < last; ++t, ++nextNumber_) {
      int32_t v[3] = {mesh.index[3 * t], mesh.index[3 * t + 1], mesh.index[3 * t + 2]};
      Vec3 face = TriangleNormal(mesh.p[size_t(v[0])], mesh.p[size_t(v[1])], mesh.p[size_t(v[2])]);
      const float faceLength = Length(face);
      if (!(faceLength > 0.0f) || !std::isfinite(faceLength)) {
        // A tessellation's poles are no loss, but they are numbered, as every triangle made.
        scene.droppedTriangles += mesh.trianglesPerPrimitive > 0;
        scene.triangleNumbers.dropped.push_back(nextNumber_);
        continue;
      }
      bool swap = mesh.facing == Facing::kFlipped;
      if (mesh.facing == Facing::kNormals)
        swap = Dot(face, mesh.n[size_t(v[0])] + mesh.n[size_t(v[1])] + mesh.n[size_t(v[2])]) < 0.0f;
      const float defaultUv[3][2] = {{0, 0}, {1, 0}, {1, 1}};  // pbrt-v4's triangle without "uv"
      float uv[3][2];
      for (int c = 0; c < 3; ++c)
        for (int k = 0; k < 2; ++k)
          uv[c][k] = mesh.uv.empty() ? defaultUv[c][k] : mesh.uv[2 * size_t(v[c]) + size_t(k)];
      if (swap) {
        std::swap(v[1], v[2]);
        std::swap(uv[1], uv[2]);
        face = -face;
      }
      face = face / faceLength;
      for (int c = 0; c < 3; ++c) {
        scene.positions.push_back(mesh.p[size_t(v[c])]);
        Vec3 n = mesh.n.empty() ? face : mesh.n[size_t(v[c])];
        const float length = Length(n);
        if (length > 0.0f && std::isfinite(length)) {
          n = n / length;
        } else {
          n = face;
          ++badNormals_;
        }
        scene.normals.push_back(n);
        scene.uvs.push_back(uv[c][0]);
        scene.uvs.push_back(uv[c][1]);
      }
      scene.triMaterial.push_back(material);
    }
  }
}

void ShapeBuilder::Finish() {
  Scene& scene = load_.scene;
  for (const Vec3& p : scene.positions) Grow(p);
  const double diagonal = lo_.x <= hi_.x ? double(Length(hi_ - lo_)) : 1.0;
  // Last, and so numbered after every mesh's triangles: the meshes' numbers do not depend on how finely the scene's
  // size has these cut.
  for (const PbrtWorldShape& ws : quadrics_) Tessellate(ws, diagonal);
  Vec3 lo(kInf), hi(-kInf);
  for (const Vec3& p : scene.positions) lo = Min(lo, p), hi = Max(hi, p);
  scene.boundsMin = lo;
  scene.boundsMax = hi;
  if (scene.droppedTriangles)
    load_.Warn(PbrtLoc{},
               "dropped " + std::to_string(scene.droppedTriangles) + " degenerate (zero-area) or non-finite triangles");
  if (badNormals_)
    load_.Warn(PbrtLoc{},
               std::to_string(badNormals_) + " vertex normals are zero or not finite; used the face normal instead");
}

}  // namespace

int CircleSegments(double radius, double sceneDiagonal) {
  // A chord over an angle 2 pi / n stands off the circle by r (1 - cos(pi / n)) ~ r pi^2 / (2 n^2).
  const double n = kPi * std::sqrt(radius / (2.0 * kSagitta * std::max(sceneDiagonal, 1e-30)));
  return int(std::clamp(std::ceil(std::isfinite(n) ? n : 512.0), 8.0, 512.0));
}

void AddPbrtShapes(PbrtLoad& load, PbrtMaterials& materials, PbrtTextures& textures) {
  PbrtFlatShapes flat;
  try {
    // Flattening is refused past the size a single scene file may have (LoadOptions::maxFileBytes, 2 GiB).
    flat = FlattenShapes(load.pbrt, load.options.maxFileBytes);
  } catch (const PbrtError& e) {
    throw SceneError(e.what());
  }
  if (flat.instanceCopies)
    load.Note(load.pbrt.instances.front().loc,
              std::to_string(load.pbrt.instances.size()) + " object instances flattened into " +
                  std::to_string(flat.instanceCopies) + " shape copies (about " +
                  std::to_string((flat.bytes + (1 << 20) - 1) >> 20) + " MiB of geometry before triangulation)");
  ShapeBuilder builder(load, materials, textures);
  for (const PbrtWorldShape& ws : flat.shapes) builder.Add(ws);
  builder.Finish();
}

}  // namespace tracer::pbrtload

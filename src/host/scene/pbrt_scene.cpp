// @file pbrt_scene.cpp: the pieces of the pbrt scene description that compute: transforms (in the book's
// conventions, "Physically Based Rendering", 4th ed., section 3.9), parameter look-ups, and the flattening of
// object instances into world-space shapes.
#include "tracer/host/pbrt_scene.h"

#include <sys/stat.h>

#include <cmath>
#include <sstream>
#include <unordered_map>

namespace tracer {

std::string PbrtLoc::ToString() const {
  if (!file) return "<default>";
  return line > 0 ? *file + ":" + std::to_string(line) : *file;
}

PbrtError::PbrtError(const PbrtLoc& loc, const std::string& message)
    : PbrtError(loc.file ? *loc.file : std::string("<default>"), loc.line, message) {}

PbrtError::PbrtError(const std::string& file, int line, const std::string& message)
    : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + message),
      file(file),
      line(line),
      message(message) {}

// ---- transforms ----

PbrtTransform PbrtTransform::Translate(double x, double y, double z) {
  return {{{{1, 0, 0, x}, {0, 1, 0, y}, {0, 0, 1, z}, {0, 0, 0, 1}}}};
}

PbrtTransform PbrtTransform::Scale(double x, double y, double z) {
  return {{{{x, 0, 0, 0}, {0, y, 0, 0}, {0, 0, z, 0}, {0, 0, 0, 1}}}};
}

PbrtTransform PbrtTransform::Rotate(double degrees, double x, double y, double z) {
  const double length = std::sqrt(x * x + y * y + z * z);
  if (!(length > 0.0) || !std::isfinite(length)) throw std::invalid_argument("the rotation axis is zero");
  const double a[3] = {x / length, y / length, z / length};
  const double theta = degrees * M_PI / 180.0;
  const double s = std::sin(theta), c = std::cos(theta);
  // Rodrigues' formula, R = c I + s [a]x + (1 - c) a a^T: the book's Rotate(theta, axis), equation (3.16).
  PbrtTransform t;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) t.m[i][j] = (i == j ? c : 0.0) + (1.0 - c) * a[i] * a[j];
  t.m[0][1] -= s * a[2];
  t.m[0][2] += s * a[1];
  t.m[1][0] += s * a[2];
  t.m[1][2] -= s * a[0];
  t.m[2][0] -= s * a[1];
  t.m[2][1] += s * a[0];
  return t;
}

namespace {

PbrtVec3 Sub(const PbrtVec3& a, const PbrtVec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
PbrtVec3 Cross(const PbrtVec3& a, const PbrtVec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double Length(const PbrtVec3& v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }
PbrtVec3 Normalize(const PbrtVec3& v) {
  const double l = Length(v);
  return {v[0] / l, v[1] / l, v[2] / l};
}

}  // namespace

PbrtTransform PbrtTransform::LookAt(const PbrtVec3& eye, const PbrtVec3& look, const PbrtVec3& up) {
  const PbrtVec3 toLook = Sub(look, eye);
  if (!(Length(toLook) > 0.0)) throw std::invalid_argument("the eye and the look-at point are the same");
  if (!(Length(up) > 0.0)) throw std::invalid_argument("the up vector is zero");
  const PbrtVec3 dir = Normalize(toLook);
  const PbrtVec3 side = Cross(Normalize(up), dir);
  if (!(Length(side) > 1e-12)) throw std::invalid_argument("the up vector is parallel to the viewing direction");
  const PbrtVec3 right = Normalize(side);
  const PbrtVec3 newUp = Cross(dir, right);
  // The columns of worldFromCamera are the camera's axes and its position (the book, section 3.9.8); the
  // world-to-camera matrix is its inverse: the transposed rotation, and the eye moved to the origin.
  PbrtTransform t;
  const PbrtVec3* axes[3] = {&right, &newUp, &dir};
  for (int row = 0; row < 3; ++row) {
    for (int col = 0; col < 3; ++col) t.m[row][col] = (*axes[row])[col];
    t.m[row][3] = -((*axes[row])[0] * eye[0] + (*axes[row])[1] * eye[1] + (*axes[row])[2] * eye[2]);
  }
  return t;
}

PbrtTransform PbrtTransform::FromFileNumbers(const double numbers[16]) {
  PbrtTransform t;
  for (int row = 0; row < 4; ++row)
    for (int col = 0; col < 4; ++col) t.m[row][col] = numbers[col * 4 + row];
  return t;
}

PbrtTransform PbrtTransform::operator*(const PbrtTransform& right) const {
  PbrtTransform out;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      double sum = 0.0;
      for (int k = 0; k < 4; ++k) sum += m[i][k] * right.m[k][j];
      out.m[i][j] = sum;
    }
  return out;
}

PbrtTransform PbrtTransform::Inverse() const {
  // Gauss-Jordan elimination with partial pivoting on [m | I].
  double a[4][8];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) a[i][j] = j < 4 ? m[i][j] : (j - 4 == i ? 1.0 : 0.0);
  for (int col = 0; col < 4; ++col) {
    int pivot = col;
    for (int r = col + 1; r < 4; ++r)
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    if (!(std::fabs(a[pivot][col]) > 0.0)) throw std::domain_error("the matrix is singular");
    if (pivot != col)
      for (int j = 0; j < 8; ++j) std::swap(a[pivot][j], a[col][j]);
    const double inv = 1.0 / a[col][col];
    for (int j = 0; j < 8; ++j) a[col][j] *= inv;
    for (int r = 0; r < 4; ++r) {
      if (r == col || a[r][col] == 0.0) continue;
      const double f = a[r][col];
      for (int j = 0; j < 8; ++j) a[r][j] -= f * a[col][j];
    }
  }
  PbrtTransform out;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) out.m[i][j] = a[i][j + 4];
  return out;
}

PbrtVec3 PbrtTransform::ApplyPoint(const PbrtVec3& p) const {
  double r[4];
  for (int i = 0; i < 4; ++i) r[i] = m[i][0] * p[0] + m[i][1] * p[1] + m[i][2] * p[2] + m[i][3];
  if (r[3] == 1.0 || r[3] == 0.0) return {r[0], r[1], r[2]};
  return {r[0] / r[3], r[1] / r[3], r[2] / r[3]};
}

PbrtVec3 PbrtTransform::ApplyVector(const PbrtVec3& v) const {
  PbrtVec3 r;
  for (int i = 0; i < 3; ++i) r[i] = m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2];
  return r;
}

PbrtVec3 PbrtTransform::ApplyNormal(const PbrtVec3& n) const {
  // The inverse transpose of the upper 3x3 keeps normals perpendicular to transformed surfaces (the book,
  // section 3.10.3): it is the cofactor matrix over the determinant.
  const auto& a = m;
  const double cof[3][3] = {{a[1][1] * a[2][2] - a[1][2] * a[2][1], a[1][2] * a[2][0] - a[1][0] * a[2][2],
                             a[1][0] * a[2][1] - a[1][1] * a[2][0]},
                            {a[0][2] * a[2][1] - a[0][1] * a[2][2], a[0][0] * a[2][2] - a[0][2] * a[2][0],
                             a[0][1] * a[2][0] - a[0][0] * a[2][1]},
                            {a[0][1] * a[1][2] - a[0][2] * a[1][1], a[0][2] * a[1][0] - a[0][0] * a[1][2],
                             a[0][0] * a[1][1] - a[0][1] * a[1][0]}};
  const double det = Determinant3();
  const double s = det != 0.0 ? 1.0 / det : 1.0;
  PbrtVec3 r;
  for (int i = 0; i < 3; ++i) r[i] = s * (cof[i][0] * n[0] + cof[i][1] * n[1] + cof[i][2] * n[2]);
  return r;
}

double PbrtTransform::Determinant3() const {
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

// ---- parameters ----

const char* PbrtParamTypeName(PbrtParamType type) {
  // In the order of PbrtParamType.
  static const char* const kNames[] = {"integer",  "float", "point2",    "vector2", "point3", "vector3", "normal3",
                                       "spectrum", "rgb",   "blackbody", "bool",    "string", "texture"};
  const size_t i = static_cast<size_t>(type);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "?";
}

size_t PbrtParam::Count() const {
  switch (type) {
    case PbrtParamType::kInteger:
      return ints.size();
    case PbrtParamType::kBool:
      return bools.size();
    case PbrtParamType::kString:
    case PbrtParamType::kTexture:
      return strings.size();
    case PbrtParamType::kPoint2:
    case PbrtParamType::kVector2:
      return floats.size() / 2;
    case PbrtParamType::kPoint3:
    case PbrtParamType::kVector3:
    case PbrtParamType::kNormal3:
    case PbrtParamType::kRgb:
      return floats.size() / 3;
    case PbrtParamType::kSpectrum:
      return strings.empty() ? floats.size() / 2 : strings.size();
    case PbrtParamType::kFloat:
    case PbrtParamType::kBlackbody:
      return floats.size();
  }
  return 0;
}

const PbrtParam* PbrtParams::Find(const std::string& name) const {
  for (auto p = list.rbegin(); p != list.rend(); ++p)
    if (p->name == name) return &*p;
  return nullptr;
}

const PbrtParam* PbrtParams::Find(const std::string& name, PbrtParamType type) const {
  for (auto p = list.rbegin(); p != list.rend(); ++p)
    if (p->name == name && p->type == type) return &*p;
  return nullptr;
}

double PbrtParams::GetFloat(const std::string& name, double fallback) const {
  const PbrtParam* p = Find(name, PbrtParamType::kFloat);
  return p && !p->floats.empty() ? p->floats[0] : fallback;
}

int PbrtParams::GetInt(const std::string& name, int fallback) const {
  const PbrtParam* p = Find(name, PbrtParamType::kInteger);
  return p && !p->ints.empty() ? p->ints[0] : fallback;
}

bool PbrtParams::GetBool(const std::string& name, bool fallback) const {
  const PbrtParam* p = Find(name, PbrtParamType::kBool);
  return p && !p->bools.empty() ? static_cast<bool>(p->bools[0]) : fallback;
}

std::string PbrtParams::GetString(const std::string& name, const std::string& fallback) const {
  const PbrtParam* p = Find(name, PbrtParamType::kString);
  return p && !p->strings.empty() ? p->strings[0] : fallback;
}

std::vector<double> PbrtParams::GetFloats(const std::string& name) const {
  for (auto p = list.rbegin(); p != list.rend(); ++p)
    if (p->name == name && !p->floats.empty()) return p->floats;
  return {};
}

std::vector<int32_t> PbrtParams::GetInts(const std::string& name) const {
  const PbrtParam* p = Find(name, PbrtParamType::kInteger);
  return p ? p->ints : std::vector<int32_t>();
}

size_t PbrtParams::PayloadBytes() const {
  size_t bytes = 0;
  for (const PbrtParam& p : list) {
    bytes += p.ints.size() * sizeof(int32_t) + p.floats.size() * sizeof(double) + p.bools.size() / 8;
    for (const std::string& s : p.strings) bytes += s.size();
  }
  return bytes;
}

// ---- the scene ----

const PbrtTexture* PbrtScene::FindTexture(const std::string& name, bool isFloat) const {
  for (const PbrtTexture& t : textures)
    if (t.name == name && t.isFloat == isFloat) return &t;
  return nullptr;
}

const PbrtMedium* PbrtScene::FindMedium(const std::string& name) const {
  for (const PbrtMedium& m : media)
    if (m.name == name) return &m;
  return nullptr;
}

std::string PbrtScene::ResolvePath(const std::string& name) const {
  if (name.empty() || name[0] == '/' || searchDir.empty()) return name;
  return searchDir + "/" + name;
}

std::string PbrtScene::Summary() const {
  size_t instancedShapes = 0;
  for (const PbrtObject& o : objects) instancedShapes += o.shapes.size();
  std::ostringstream s;
  s << shapes.size() << " shapes, " << lights.size() << " lights, " << areaLights.size() << " area lights, "
    << materials.size() << " materials (" << namedMaterials.size() << " named), " << textures.size() << " textures, "
    << media.size() << " media, " << objects.size() << " objects (" << instancedShapes << " shapes), "
    << instances.size() << " instances";
  return s.str();
}

namespace {

// The bytes of a plymesh's file, as an estimate of the mesh one more copy of it costs (0 when it is not there).
size_t PlyFileBytes(const PbrtScene& scene, const PbrtShape& shape, std::unordered_map<std::string, size_t>& cache) {
  if (shape.type != "plymesh") return 0;
  const std::string path = scene.ResolvePath(shape.params.GetString("filename", ""));
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  struct stat st;
  const size_t bytes = stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
  cache.emplace(path, bytes);
  return bytes;
}

}  // namespace

PbrtFlatShapes FlattenShapes(const PbrtScene& scene, size_t maxBytes) {
  PbrtFlatShapes flat;
  size_t total = scene.shapes.size();
  for (const PbrtInstance& inst : scene.instances)
    if (inst.object >= 0) total += scene.objects[static_cast<size_t>(inst.object)].shapes.size();
  flat.shapes.reserve(total);
  flat.bytes = total * sizeof(PbrtWorldShape);
  if (flat.bytes > maxBytes)
    throw PbrtError(scene.instances.empty() ? PbrtLoc{} : scene.instances.back().loc,
                    "flattening the object instances would take " + std::to_string(flat.bytes) +
                        " bytes, over the limit of " + std::to_string(maxBytes));
  for (const PbrtShape& s : scene.shapes) flat.shapes.push_back({&s, s.objectToWorld, -1});
  std::unordered_map<std::string, size_t> plyBytes;
  for (size_t i = 0; i < scene.instances.size(); ++i) {
    const PbrtInstance& inst = scene.instances[i];
    if (inst.object < 0) continue;
    for (const PbrtShape& s : scene.objects[static_cast<size_t>(inst.object)].shapes) {
      flat.shapes.push_back({&s, inst.worldFromInstance * s.objectToWorld, static_cast<int>(i)});
      flat.bytes += s.params.PayloadBytes() + PlyFileBytes(scene, s, plyBytes);
      ++flat.instanceCopies;
    }
    if (flat.bytes > maxBytes)
      throw PbrtError(inst.loc, "flattening object instances takes more than " + std::to_string(maxBytes) +
                                    " bytes by this ObjectInstance \"" + inst.name + "\"");
  }
  return flat;
}

}  // namespace tracer

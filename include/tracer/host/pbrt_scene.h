// @file pbrt_scene.h: a pbrt-v4 scene as its files describe it (what ParsePbrtFile returns): the rendering options,
// camera, materials, textures, media, lights, shapes and object instances, each with its parameters as written and
// the file and line it came from. Nothing is mapped to the renderer here; that is the next step's job.
//
// Conventions are pbrt-v4's (Pharr, Jakob, Humphreys, "Physically Based Rendering", 4th ed., and the pbrt-v4 file
// format documentation, pbrt.org/fileformat-v4):
//  - A PbrtTransform is a 4x4 matrix m[row][column] applied to column vectors: p' = m * (x, y, z, 1). Composition
//    appends on the right, as pbrt's directives do: after `Translate` then `Scale` the CTM is T * S, so an object's
//    points are scaled first, then translated.
//  - pbrt's camera space is left-handed: +x to the right of the image, +y up, +z the viewing direction. The CTM at
//    the `Camera` directive is the world-to-camera transform (cameraFromWorld); `LookAt` builds one such matrix.
//  - Angles in files are in degrees; `Rotate` turns by the right-hand rule about its axis (the book's Rotate()).
//  - Colours are in the colour space in force ("srgb" unless `ColorSpace` says otherwise).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tracer {

// Where a directive or a parameter stands in the scene's files.
struct PbrtLoc {
  std::shared_ptr<const std::string> file;  // shared: every directive of a file points at one name
  int line = 0;                             // 1-based; 0 with no file: pbrt's default, not in any file
  bool Known() const { return file != nullptr; }
  std::string ToString() const;  // "file:line", or "<default>"
};

// A bad scene file. what() reads "file:line: message" (just "file: message" when the line is unknown).
class PbrtError : public std::runtime_error {
 public:
  PbrtError(const PbrtLoc& loc, const std::string& message);
  PbrtError(const std::string& file, int line, const std::string& message);
  std::string file;
  int line = 0;
  std::string message;  // without the location
};

using PbrtVec3 = std::array<double, 3>;

// A 4x4 transform in pbrt's convention (see the top of this file).
struct PbrtTransform {
  std::array<std::array<double, 4>, 4> m{{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}};

  static PbrtTransform Translate(double x, double y, double z);
  static PbrtTransform Scale(double x, double y, double z);
  // A turn of `degrees` about the axis (x, y, z), normalised first (the book, section 3.9.7). Throws
  // std::invalid_argument for a zero axis.
  static PbrtTransform Rotate(double degrees, double x, double y, double z);
  // The world-to-camera matrix for a camera at `eye` looking at `look` with `up` roughly up (the book, section
  // 3.9.8): the camera's +z is (look - eye) normalised, +x is up x z, +y is z x x. Throws std::invalid_argument when
  // eye == look or up is parallel to the viewing direction.
  static PbrtTransform LookAt(const PbrtVec3& eye, const PbrtVec3& look, const PbrtVec3& up);
  // The 16 numbers of `Transform [...]` / `ConcatTransform [...]`: pbrt reads them as a row-major matrix and
  // transposes it, so the file lists the columns, the translation in numbers 12..14.
  static PbrtTransform FromFileNumbers(const double numbers[16]);

  PbrtTransform operator*(const PbrtTransform& right) const;
  bool operator==(const PbrtTransform& other) const { return m == other.m; }
  bool operator!=(const PbrtTransform& other) const { return m != other.m; }
  // Throws std::domain_error for a singular matrix.
  PbrtTransform Inverse() const;
  PbrtVec3 ApplyPoint(const PbrtVec3& p) const;   // with the projective divide when the last row is not (0,0,0,1)
  PbrtVec3 ApplyVector(const PbrtVec3& v) const;  // the upper 3x3 only
  PbrtVec3 ApplyNormal(const PbrtVec3& n) const;  // the inverse transpose of the upper 3x3
  double Determinant3() const;                    // of the upper 3x3
  // Whether it turns a right-handed frame into a left-handed one (pbrt flips shading normals for such shapes).
  bool SwapsHandedness() const { return Determinant3() < 0.0; }
  bool IsIdentity() const { return *this == PbrtTransform(); }
};

// The parameter types of pbrt-v4's format. The old names are read as these: "point" as point3, "vector" as
// vector3, "normal" as normal3, "color" as rgb (with a warning).
enum class PbrtParamType : uint8_t {
  kInteger,
  kFloat,
  kPoint2,
  kVector2,
  kPoint3,
  kVector3,
  kNormal3,
  kSpectrum,  // (wavelength nm, value) pairs, or one string: a named spectrum ("metal-Cu-eta") or a file name
  kRgb,
  kBlackbody,  // a temperature in kelvin per item
  kBool,
  kString,
  kTexture,  // the name of a texture
};
const char* PbrtParamTypeName(PbrtParamType type);  // the canonical pbrt-v4 name: "integer", "point3", ...

// One `"type name" value` or `"type name" [ values ]` of a parameter list.
struct PbrtParam {
  PbrtParamType type = PbrtParamType::kFloat;
  std::string name;
  std::vector<int32_t> ints;         // integer
  std::vector<double> floats;        // float, point*, vector*, normal3, rgb, blackbody, numeric spectrum
  std::vector<std::string> strings;  // string, texture, spectrum by name or file
  std::vector<bool> bools;           // bool
  PbrtLoc loc;
  bool fromAttribute = false;  // a default from an `Attribute` directive, not written on the directive itself
  // Items: values / values-per-item (3 for an rgb, 2 per pair of a numeric spectrum, 1 for a string).
  size_t Count() const;
};

// A directive's parameters: the `Attribute` defaults in force first, then the directive's own, each in file order.
// Look-ups take the last match, as pbrt-v4's ParameterDictionary does (it reverses both lists): a directive's own
// parameter overrides a default, and of a name given twice the later one counts.
struct PbrtParams {
  std::vector<PbrtParam> list;

  const PbrtParam* Find(const std::string& name) const;  // the last of that name, whatever its type
  const PbrtParam* Find(const std::string& name, PbrtParamType type) const;
  bool Has(const std::string& name) const { return Find(name) != nullptr; }
  // The first value of the parameter of that name and type, or `fallback` when there is none (pbrt's GetOne*).
  double GetFloat(const std::string& name, double fallback) const;
  int GetInt(const std::string& name, int fallback) const;
  bool GetBool(const std::string& name, bool fallback) const;
  std::string GetString(const std::string& name, const std::string& fallback) const;
  // All the values of the float-valued parameter of that name (any numeric type but integer), or empty.
  std::vector<double> GetFloats(const std::string& name) const;
  std::vector<int32_t> GetInts(const std::string& name) const;
  // The bytes its values take (for the memory of flattened instances).
  size_t PayloadBytes() const;
};

// A directive of the form `Name "type" params`: Camera, Film, Sampler, Integrator, PixelFilter, Accelerator,
// Material, AreaLightSource, ... `type` is what pbrt calls the name of the implementation ("perspective", "rgb",
// "diffuse"); for MakeNamedMaterial and MakeNamedMedium it is their "string type" parameter.
struct PbrtEntity {
  std::string type;
  PbrtParams params;
  PbrtLoc loc;                      // unknown for a default that no directive set
  std::string colorSpace = "srgb";  // the ColorSpace in force at the directive
};

struct PbrtCamera : PbrtEntity {
  PbrtTransform cameraFromWorld;  // the CTM at `Camera`
  PbrtTransform worldFromCamera;  // its inverse; also the named coordinate system "camera"
  std::string medium;             // the outside medium of the MediumInterface in force
};

struct PbrtMaterial : PbrtEntity {
  std::string name;  // MakeNamedMaterial's name; empty for an anonymous `Material`
};

struct PbrtTexture : PbrtEntity {
  std::string name;
  bool isFloat = false;  // "float" texture, else "spectrum"
  PbrtTransform objectToWorld;
};

struct PbrtMedium : PbrtEntity {
  std::string name;
  PbrtTransform objectToWorld;
};

struct PbrtLight : PbrtEntity {
  PbrtTransform objectToWorld;
  std::string medium;  // outside medium
  bool reverseOrientation = false;
};

struct PbrtShape : PbrtEntity {
  PbrtTransform objectToWorld;  // the CTM at `Shape` (at the start time when it was animated)
  bool reverseOrientation = false;
  bool animated = false;  // the CTM moved between TransformTimes' start and end; objectToWorld is the start
  int material = 0;       // index into PbrtScene::materials
  int areaLight = -1;     // index into PbrtScene::areaLights, or -1
  std::string insideMedium, outsideMedium;
};

// ObjectBegin "name" ... ObjectEnd: shapes placed by each ObjectInstance "name". A shape's objectToWorld is the
// CTM at its `Shape` (the CTM at ObjectBegin included); an instance puts it at worldFromInstance * objectToWorld.
struct PbrtObject {
  std::string name;
  PbrtLoc loc;
  std::vector<PbrtShape> shapes;
};

struct PbrtInstance {
  std::string name;
  int object = -1;  // index into PbrtScene::objects
  PbrtTransform worldFromInstance;
  bool animated = false;
  PbrtLoc loc;
};

struct PbrtOption {
  std::string name, value;  // value as written (a string without its quotes)
  PbrtLoc loc;
};

// How often a directive appears and where first, for "file:line: unsupported X" once per kind.
struct PbrtDirectiveUse {
  size_t count = 0;
  PbrtLoc first;
};

struct PbrtScene {
  std::string path;                // the main file
  std::string searchDir;           // its folder: pbrt resolves every file name in the scene against it
  std::vector<std::string> files;  // every file read (the main one, Include and Import)

  // Rendering options (before WorldBegin); each has pbrt-v4's default type until a directive sets it.
  PbrtCamera camera;
  PbrtEntity film, sampler, integrator, filter, accelerator;
  std::vector<PbrtOption> options;
  double transformStartTime = 0.0, transformEndTime = 1.0;

  std::vector<PbrtMaterial> materials;        // [0]: pbrt's initial material, a default "diffuse"
  std::map<std::string, int> namedMaterials;  // MakeNamedMaterial name -> index into materials
  std::vector<PbrtTexture> textures;
  std::vector<PbrtMedium> media;
  std::vector<PbrtLight> lights;
  std::vector<PbrtEntity> areaLights;  // each AreaLightSource once; shapes index it
  std::vector<PbrtShape> shapes;       // outside object definitions, in file order
  std::vector<PbrtObject> objects;
  std::vector<PbrtInstance> instances;
  std::map<std::string, PbrtTransform> coordinateSystems;  // CoordinateSystem's, plus "camera" and "world"
  std::map<std::string, PbrtDirectiveUse> directives;      // every directive seen, by name
  std::vector<std::string> warnings;                       // "file:line: message", in order

  const PbrtTexture* FindTexture(const std::string& name, bool isFloat) const;
  const PbrtMedium* FindMedium(const std::string& name) const;
  // A file name as pbrt resolves it: absolute as it is, else relative to searchDir.
  std::string ResolvePath(const std::string& name) const;
  std::string Summary() const;  // one line of counts
};

// Every shape in world space: the scene's own, then each instance's copies.
struct PbrtWorldShape {
  const PbrtShape* shape = nullptr;  // points into the scene, which must outlive this
  PbrtTransform objectToWorld;       // for an instance: worldFromInstance * shape->objectToWorld
  int instance = -1;                 // index into PbrtScene::instances, or -1
};

struct PbrtFlatShapes {
  std::vector<PbrtWorldShape> shapes;
  size_t instanceCopies = 0;  // shapes that come from instances
  // What flattening costs: this list, plus the geometry each instance copy duplicates (its inline parameter values;
  // for a plymesh, its file's size as an estimate of the mesh it loads).
  size_t bytes = 0;
};

// Flattens object instances into world-space shapes. Throws PbrtError, naming the ObjectInstance that crosses it,
// when the cost would pass maxBytes.
PbrtFlatShapes FlattenShapes(const PbrtScene& scene, size_t maxBytes = SIZE_MAX);

}  // namespace tracer

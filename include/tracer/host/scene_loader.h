// @file scene_loader.h: the scene as loaded on the host (before BVH order), and the loader's interface.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracer/core/delta_lights.h"
#include "tracer/core/material.h"
#include "tracer/core/math.h"

namespace tracer {

// Any problem with an input file. what() reads "path:line: message" (line omitted when unknown).
class SceneError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An image file as decoded, once per file however many materials and maps name it.
struct Texture {
  std::string path;
  int width = 0, height = 0;
  std::vector<Float4> texels;  // linear RGB (data maps such as map_Ns: the file's values / 255), row 0 at the top
};

// The mean of an image's texels, per channel (r, g, b), as the file holds them (before a map's -mm).
std::array<double, 3> MeanTexel(const Texture& texture);

// The options of an MTL texture statement ("map_Kd -s 2 2 -clamp on wall.png"), as the MTL format (Wavefront,
// "Material Library File (.mtl)", Alias|Wavefront 1995) defines them.
struct TextureOptions {
  float scale[2] = {1.0f, 1.0f};   // -s u v: the lookup is at (s * uv + o); Blender's importer reads -s/-o this way
  float offset[2] = {0.0f, 0.0f};  // -o u v
  bool clamp = false;              // -clamp on: uv clamped to [0, 1] (the edge texels extend) instead of repeating
  float base = 0.0f, gain = 1.0f;  // -mm base gain: a texel's value becomes base + gain * value
  float bumpMultiplier = 1.0f;     // -bm: a bump map's height in scene units is bumpMultiplier times the texel
  char channel = 0;                // -imfchan r|g|b|m|l|z, 0 when not given: the channel a scalar map reads
  // -colorspace linear|sRGB (tinyobjloader's extension), 0 when not given: how the 8-bit values are decoded. A colour
  // map (map_Kd, map_Ke) is sRGB unless 'l' (linear: value / 255); a data map (map_Ks, map_Ns, bump, norm) linear
  // unless 's' (sRGB-decoded, all three channels). map_d's opacity ignores it.
  char colorspace = 0;
};

// A texture as a material uses it: an image (index into Scene::textures) and the options of the statement.
// Statements naming the same file with the same options share one TextureMap.
struct TextureMap {
  int texture = -1;
  TextureOptions options;
};

// One material as the BSDFs read it (core/material.h's Material says how each field is used per class and lobe).
// OBJ materials use the class's own BSDF (lobe 0) and leave the pbrt-v4 fields at the end as they are.
struct HostMaterial {
  std::string name;
  MaterialClass cls = kDiffuse;
  Vec3 kd{0.5f, 0.5f, 0.5f};  // base colour; for dielectrics: the transmission tint (Tf)
  Vec3 ks{0.0f, 0.0f, 0.0f};  // glossy: the specular layer's f0; mirror: its reflectance
  Vec3 ke{0.0f, 0.0f, 0.0f};
  float alpha = 1.0f;            // GGX alpha (Blender's roughness squared)
  float ior = 1.5f;              // dielectrics
  float f90 = 1.0f;              // glossy: the specular layer's reflectance at grazing
  float opacity = 1.0f;          // MTL d: the probability that a ray stops at the surface (times map_d's texel)
  int texture = -1;              // map_Kd: index into Scene::textureMaps
  int specularTexture = -1;      // map_Ks (glossy only): index into Scene::textureMaps
  int roughnessTexture = -1;     // map_Ns (glossy only): index into Scene::textureMaps
  int opacityTexture = -1;       // map_d (any class): index into Scene::textureMaps, read as opacity
  int emissionTexture = -1;      // map_Ke: index into Scene::textureMaps; emission is ke times its texel
  int bumpTexture = -1;          // bump/map_Bump or norm/map_Kn: index into Scene::textureMaps
  bool bumpIsNormalMap = false;  // bumpTexture holds tangent-space normals (norm), not heights (bump)
  float specularScale = 0.0f;    // with map_Ks: 2 f0(Ni) for a dielectric layer, 0 for a conductor
  bool twoSided = false;         // the emission leaves both sides (pbrt's "twosided" area lights; OBJ: never)
  // pbrt-v4's materials (core/bsdf.h's lobes, core/lobes.h): kd and ks as core/material.h's Material says per lobe
  // (conductor: kd = eta, ks = k; diffuse transmission: ks the transmittance).
  int lobe = 0;                       // BsdfLobe (0: the class's own)
  float alphaY = 0.0f;                // GGX lobes: alpha along v (alpha along u)
  bool conductorReflectance = false;  // conductor: kd is pbrt-v4's "reflectance", not eta (k then follows from it)
  CoatLayer coat{};                   // coated: the layer's constants (CoatedLayerOf)
  int coatTable = -1;                 // coated: the coat's table (FillCoatTable), a TextureMap index
  int transmittanceTexture = -1;      // diffuse transmission: ks's texture
  // A mix (pbrt-v4's "mix", ResolveMix): per hit point material mixB with probability mixAmount, else mixA (indices
  // into Scene::materials); the mix keeps its own emission and cut-out.
  bool mix = false;
  int mixA = -1, mixB = -1;
  float mixAmount = 0.5f;
  // Blender's PBR keys of an MTL as the principled lobe reads them (core/principled.h; lobe kLobePrincipled): the
  // metallic weight Pm (mixed in per hit point: kd, ks and f90 above are the layer before it), the sheen's weight Ps,
  // the coat's weight Pc / 4 and alpha Pcr^2, the anisotropy and its rotation (in turns), map_Pm's and map_Ps's
  // textures (their texels replace Pm and Ps) and the lobe's table (FillPrincipledTable), TextureMap indices.
  float metallic = 0.0f, sheen = 0.0f, coatWeight = 0.0f, coatAlpha = 0.0f;
  float anisotropy = 0.0f, anisotropyRotation = 0.0f;
  int metallicTexture = -1, sheenTexture = -1, layerTable = -1;
  bool IsEmissive() const { return ke.x > 0.0f || ke.y > 0.0f || ke.z > 0.0f; }
};

struct CameraSpec {
  bool valid = false;
  Vec3 eye, lookAt, up{0.0f, 1.0f, 0.0f};
  float fovY = 45.0f;
  float aperture = 0.0f;       // thin-lens radius in scene units; 0: pinhole
  float focusDistance = 0.0f;  // along the view; 0: the distance from eye to look_at
};

// What a scene file asks of the render where the command line gives nothing (pbrt-v4's Film, Sampler and Integrator;
// with pbrt-v4's defaults where the file is silent). OBJ scenes set none (valid false); the app applies each value
// only where the user gave no flag.
struct SceneDefaults {
  bool valid = false;
  int width = 0, height = 0;  // Film "xresolution", "yresolution" (pbrt-v4: 1280 x 720)
  int spp = 0;                // Sampler "pixelsamples" (pbrt-v4: 16)
  int maxDepth = -1;          // Integrator "maxdepth" (pbrt-v4: 5), bounces as --max-depth counts them
  std::string output;         // Film "filename" as written (pbrt-v4: "pbrt.exr")
  // The perspective camera's "fov", which pbrt-v4 gives the image's shorter axis. CameraSpec::fovY holds it converted
  // for width x height; at another size, FovYForShorterAxis(fovShorterAxis, w, h) gives the vertical one.
  float fovShorterAxis = 0.0f;
};

// The vertical field of view, in degrees, of an image of w x h pixels whose shorter axis spans `fovDegrees`.
float FovYForShorterAxis(float fovDegrees, int width, int height);

// The environment a scene file gives (pbrt-v4's "infinite" light); present false for OBJ scenes. The app uses it
// where the command line names none (--env, --env-map).
struct SceneEnvironment {
  bool present = false;
  Vec3 color{0.0f, 0.0f, 0.0f};  // constant radiance, when there is no map (width 0)
  // A lat-long map in the convention of core/environment.h and EnvImage (host/env_map.h), already turned into the
  // world's frame (no --env-rotate needed): width x height texels of linear RGB, row 0 at the top (+y).
  int width = 0, height = 0;
  std::vector<float> rgb;  // 3 per texel
  std::string source;      // "file:line" of the light, for messages
};

// pbrt-v4's equal-area octahedral mapping of the unit square onto the sphere (Clarberg 2008, "Fast equal-area
// mapping of the (hemi)sphere using SIMD"; pbrt-v4 src/pbrt/util/math.cpp), the layout of its "infinite" lights'
// images: (u, v) in [0, 1]^2 -> a unit direction, +z at the centre of the square, -z at its corners.
Vec3 EqualAreaSquareToSphere(float u, float v);
// Its inverse: a unit direction -> (u, v) in [0, 1]^2.
void EqualAreaSphereToSquare(Vec3 d, float& u, float& v);

// Seconds LoadScene spent in each of its phases (tracer --benchmark prints them).
struct LoadSeconds {
  double read = 0.0;      // the OBJ read into memory
  double validate = 0.0;  // our line-by-line checks of the text, and with them our parse of its numbers and indices
  double parse = 0.0;     // the MTL files and the triangulation (LoadOptions::tinyobjParse: tinyobjloader's parse)
  double convert = 0.0;   // materials and textures; triangles re-checked and copied into the Scene's arrays
};

// The numbers a scene file gives its triangles (docs/FORMATS.md, "Triangle numbers"), which hit files write so that
// they name what other tracers reading the same file name. The loader numbers the triangles it makes from the file's
// faces or shapes from 0, in the file's order, counting the ones it then drops (degenerate or non-finite); the
// Scene's triangles are those numbers in the same order, less the dropped ones. So the map from a Scene triangle to
// its number is kept as the dropped numbers alone: none in most files and few in others, where a full table would
// cost 4 bytes per triangle.
struct TriangleNumbers {
  std::vector<int64_t> dropped;  // the numbers that have no Scene triangle, ascending

  // The number of Scene triangle `triangle` (>= 0): the triangle-th number that was not dropped.
  int64_t FileNumber(int64_t triangle) const;
  // The Scene triangle that has number `number` (>= 0), or -1 when that triangle was dropped.
  int64_t SceneTriangle(int64_t number) const;
};

struct Scene {
  std::string path;
  std::vector<Vec3> positions;  // 3 per triangle
  std::vector<Vec3> normals;    // 3 per triangle; the face normal where the file has none
  std::vector<float> uvs;       // 6 per triangle; zeros where the file has none
  std::vector<int32_t> triMaterial;
  std::vector<HostMaterial> materials;
  std::vector<Texture> textures;        // each image file once
  std::vector<TextureMap> textureMaps;  // what materials index: an image and its options
  CameraSpec camera;                    // from the scene's .camera file (OBJ) or its Camera (pbrt), if any
  SceneDefaults defaults;               // pbrt: image size, samples, depth and output the file asks for
  SceneEnvironment environment;         // pbrt: its infinite light, if any
  std::vector<DeltaLight> deltaLights;  // pbrt: its point, spot and distant lights, in the Scene's frame
  // The environment's portals (core/portals.h), 3 corners per triangle, not part of the geometry: the faces of OBJ
  // objects and groups named portal..., pbrt's infinite light's "portal" quad. Their file numbers are among
  // triangleNumbers.dropped (no Scene triangle has them), but not counted in droppedTriangles.
  std::vector<Vec3> portals;
  // "path:line: message", in the order found. The loader does not print them: the caller decides (the
  // tracer prints each text once, with a count, unless --quiet).
  std::vector<std::string> warnings;
  // Facts about the load worth a line that are no problem ("path:line: message"): what flattening object instances
  // cost, a pbrt scene mirrored to match pbrt's left-handed camera. The caller decides whether to print them.
  std::vector<std::string> notes;
  Vec3 boundsMin, boundsMax;
  size_t droppedTriangles = 0;      // degenerate or non-finite triangles left out
  TriangleNumbers triangleNumbers;  // each triangle's number in the scene file
  LoadSeconds seconds;

  size_t NumTriangles() const { return triMaterial.size(); }
  std::string Summary() const;  // one line: triangles, materials per class, emitters, delta lights, portals
  double PortalArea() const;    // the portal triangles' total area
  // Whether the file lights itself: a triangle with an emissive material, an environment of its own (pbrt-v4's
  // infinite light) or a delta light. Without any, only --env or --env-map can light it, which the caller knows
  // (NoLightWarning is what to tell the user then).
  bool HasLight() const;
};

// "path: no emitters (...); only an environment can light it: pass --env R,G,B or --env-map FILE.hdr", worded for the
// scene's format, for a Scene without HasLight() rendered without --env or --env-map.
std::string NoLightWarning(const Scene& scene);

struct LoadOptions {
  bool allowOutsidePaths = false;         // accept mtllib/texture paths outside the scene's folder
  size_t maxFileBytes = size_t(2) << 30;  // refuse bigger OBJ/MTL/texture files
  int maxFaceVertices = 4096;             // polygons with more vertices are refused (ear clipping is quadratic)
  // More folders (--texture-path) searched, in order, for textures and MTL files not found beside the scene:
  // the name as written, then its last component. A file found there must lie inside that folder.
  std::vector<std::string> searchPaths;
  // Threads for the checks before and after tinyobjloader's parse (0 = every core; 1 = one pass in file order, the
  // naive twin). The Scene is the same, byte for byte, for any number.
  int threads = 0;
  // Parse the OBJ with tinyobjloader, in one pass after our checks: the naive twin of our parse, which reads the
  // numbers and indices during the checks (in parallel) and triangulates as tinyobjloader does. The Scene is the
  // same, byte for byte (tested).
  bool tinyobjParse = false;
};

// Loads a scene by its file name: a pbrt-v4 scene (.pbrt, .pbrt.gz: its meshes, textures and lights, mapped onto
// the renderer's materials as docs/FORMATS.md says), else an OBJ (and its MTL, textures and camera file). Throws
// SceneError on bad input.
Scene LoadScene(const std::string& path, const LoadOptions& options = {});

// The render settings a scene file asks for (pbrt-v4's Film, Sampler and Integrator), read before the scene is
// loaded so that the film's size is known first; `valid` false for a format that has none (OBJ). Reads the scene's
// text only. Throws SceneError on a file that does not parse.
SceneDefaults ReadSceneDefaults(const std::string& path);

// Reads the camera file format (docs/FORMATS.md). Throws SceneError naming the file and line.
CameraSpec LoadCameraFile(const std::string& path);

// The MTL -> material mapping (docs/RENDERING.md, "Materials"), following Blender's OBJ importer where it reads the
// file: Ks > 0 is a dielectric specular layer over Kd (glossy); a conductor (IsConductor) is glossy with f0 = Ks and no
// base, or a mirror when its GGX alpha is below kMinGlossyAlpha; illum 4/6/7/9 with Tf not black is glass. tf is white
// where the file writes no Tf; alpha comes from MtlAlpha.
MaterialClass ClassifyMaterial(int illum, Vec3 kd, Vec3 ks, float alpha, Vec3 tf);
// Metal-like: a reflection illum (3, 5, 7, 8) with Ks >= 0.5, or a black Kd under a non-black Ks.
bool IsConductor(int illum, Vec3 kd, Vec3 ks);
// GGX alpha from Ns as Blender reads it: (1 - sqrt(Ns / 1000))^2; without Ns, 0 for illum 2-8, else 1.
float MtlAlpha(int illum, bool hasNs, float ns);

}  // namespace tracer

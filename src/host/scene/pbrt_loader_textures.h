// @file pbrt_loader_textures.h: pbrt-v4 textures as the renderer holds them: images (Scene::textures) read as pbrt-v4
// reads them, and texture trees (imagemap, scale, mix, constant, checkerboard) as a factor times one TextureMap,
// baked into an image where no single map can say it.
#pragma once
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "pbrt_loader.h"
#include "pbrt_loader_spectra.h"

namespace tracer::pbrtload {

// How an image file's values become texels. pbrt-v4 (src/pbrt/util/image.cpp, Image::Read; textures.cpp): EXR, PFM
// and HDR are linear floats; PNG follows the texture's "encoding" ("sRGB" by default, "linear", "gamma g"); every
// other 8-bit format (TGA, JPEG, BMP, ...) is read through stb_image as sRGB whatever "encoding" says.
struct ImageRead {
  std::string encoding = "sRGB";  // for PNG: "sRGB", "linear" or "gamma g"
  bool firstChannel = false;      // a float texture: its first channel in every component
};

// Reads the image a scene names (resolved as pbrt resolves it, under the project's path rules) into *texture.
// Returns "", or why it cannot be used ("not found (...)", "cannot be decoded: ...").
std::string ReadPbrtImage(PbrtLoad& load, const std::string& written, const ImageRead& how, Texture* texture);

// A texture as a material can use it: value(uv) = factor * texel(map, uv), or factor alone when map is -1.
struct MappedTexture {
  Vec3 factor{1.0f, 1.0f, 1.0f};
  int map = -1;  // index into Scene::textureMaps
};

class PbrtTextures {
 public:
  explicit PbrtTextures(PbrtLoad& load) : load_(load) {}

  // The colour parameter `name` of a material: a value (rgb, spectrum, ...) or a "texture" naming a spectrum texture.
  // False when the parameter is absent or cannot be used (after a warning): the caller takes pbrt's default.
  bool Spectrum(const PbrtParams& params, const std::string& name, SpectrumUse use, MappedTexture* out);
  // The same for a float parameter (a "float" value or a "texture" naming a float texture), in every component.
  bool Float(const PbrtParams& params, const std::string& name, MappedTexture* out);
  // An image file as a TextureMap of its own (an area light's "filename", a material's "normalmap"): index into
  // Scene::textureMaps, or -1 after a warning naming `what` and the scene line `loc`.
  int ImageMap(const std::string& written, const ImageRead& how, const PbrtLoc& loc, const std::string& what);

  // A node of a texture tree: factor * (base + gain * texel(image, scale * uv + offset)) (TextureOptions), or the
  // factor alone (image -1). ok false: it cannot be used (a missing image, an unsupported kind).
  struct Node {
    bool ok = true;
    Vec3 factor{1.0f, 1.0f, 1.0f};
    int image = -1;  // index into Scene::textures
    TextureOptions options;
  };
  static Node Failed() {
    Node n;
    n.ok = false;
    return n;
  }

 private:
  Node Resolve(const PbrtTexture& texture, int depth);
  Node ResolveParam(const PbrtParams& params, const std::string& name, bool isFloat, Vec3 fallback, int depth);
  Node ResolveImage(const PbrtTexture& texture);
  Node ResolveScale(const PbrtTexture& texture, int depth);
  Node ResolveMix(const PbrtTexture& texture, int depth);
  Node ResolveCheckerboard(const PbrtTexture& texture, int depth);
  // Bakes fn over [0, 1]^2 into an image as fine as the finest of `parts` (at least minSide), with a warning.
  Node Bake(const PbrtTexture& t, const std::string& what, std::initializer_list<const Node*> parts, int minSide,
            const std::function<Vec3(float, float)>& fn);
  int LoadImage(const std::string& written, const ImageRead& how, const PbrtLoc& loc, const std::string& what);
  int MapOf(const Node& node);
  MappedTexture Mapped(const Node& node);

  PbrtLoad& load_;
  std::map<const PbrtTexture*, Node> resolved_;
  std::map<std::string, int> images_;  // "encoding|first|path as written" -> index into Scene::textures, -1: failed
  std::map<std::tuple<int, float, float, float, float, bool, float, float>, int> maps_;
};

// The bilinear value of a texture at (u, v) with the lookup TextureMap options (scale, offset, clamp, base, gain),
// as core/scene_view.h's SampleTextureIn computes it on the device: for baking and tests.
Vec3 SampleHostTexture(const Texture& texture, const TextureOptions& options, float u, float v);

}  // namespace tracer::pbrtload

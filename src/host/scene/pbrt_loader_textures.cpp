// @file pbrt_loader_textures.cpp: pbrt-v4 textures onto the renderer's images and TextureMaps (see
// pbrt_loader_textures.h). Texture meanings are pbrt-v4's src/pbrt/textures.cpp.
#include "pbrt_loader_textures.h"

#include <stb/stb_image.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <sstream>

#include "scene_text.h"
#include "textures.h"
#include "tracer/core/scene_view.h"
#include "tracer/host/image_io.h"

namespace tracer::pbrtload {
namespace {

constexpr int kMaxTreeDepth = 32;         // deeper texture trees are taken for a cycle
constexpr int kMaxBakedSide = 2048;       // baked textures: at most this many texels per side
constexpr int kMinBakedSide = 64;         // ... and at least this many
constexpr int kBakedTexelsPerCheck = 16;  // a checkerboard's square gets this many texels per side when baked

std::string LowerExtension(const std::string& name) {
  std::string n = name;
  if (n.size() > 3 && n.compare(n.size() - 3, 3, ".gz") == 0) n.resize(n.size() - 3);
  const size_t dot = n.find_last_of('.'), slash = n.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = n.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// A Portable Float Map: "PF" (RGB) or "Pf" (grey), width, height, a scale whose sign gives the byte order (negative:
// little-endian), then rows from the bottom up.
std::string DecodePfm(const std::string& bytes, Texture* texture) {
  std::istringstream in(bytes);
  std::string magic;
  int w = 0, h = 0;
  double scale = 0.0;
  if (!(in >> magic >> w >> h >> scale) || (magic != "PF" && magic != "Pf") || w <= 0 || h <= 0 || scale == 0.0)
    return "is not a PFM file (PF or Pf, width, height, scale)";
  in.get();  // the single whitespace before the data
  const int channels = magic == "PF" ? 3 : 1;
  const size_t count = size_t(w) * size_t(h) * size_t(channels), start = size_t(in.tellg());
  if (bytes.size() < start || (bytes.size() - start) / 4 < count) return "is a truncated PFM file";
  const uint16_t one = 1;
  char firstByte;
  std::memcpy(&firstByte, &one, 1);
  const bool swap = (scale < 0.0) != (firstByte == 1);  // the file's byte order is not the host's
  texture->width = w;
  texture->height = h;
  texture->texels.resize(size_t(w) * size_t(h));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float v[3];
      for (int c = 0; c < channels; ++c) {
        char b[4];
        std::memcpy(b, &bytes[start + 4 * ((size_t(y) * size_t(w) + size_t(x)) * size_t(channels) + size_t(c))], 4);
        if (swap) std::swap(b[0], b[3]), std::swap(b[1], b[2]);
        std::memcpy(&v[c], b, 4);
      }
      if (channels == 1) v[1] = v[2] = v[0];
      texture->texels[size_t(h - 1 - y) * size_t(w) + size_t(x)] = Float4{v[0], v[1], v[2], 1.0f};  // bottom row first
    }
  return "";
}

// Radiance RGBE through stb_image's float loader.
std::string DecodeHdr(const std::string& bytes, Texture* texture) {
  int w = 0, h = 0, n = 0;
  float* px = stbi_loadf_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()), int(bytes.size()), &w, &h, &n, 3);
  if (!px) return std::string("cannot be decoded: ") + stbi_failure_reason();
  texture->width = w;
  texture->height = h;
  texture->texels.resize(size_t(w) * size_t(h));
  for (size_t i = 0; i < texture->texels.size(); ++i)
    texture->texels[i] = Float4{px[3 * i], px[3 * i + 1], px[3 * i + 2], 1.0f};
  stbi_image_free(px);
  return "";
}

std::string DecodeExr(const std::string& path, Texture* texture) {
  try {
    const std::vector<float> rgb = ReadExr(path, texture->width, texture->height);
    texture->texels.resize(rgb.size() / 3);
    for (size_t i = 0; i < texture->texels.size(); ++i)
      texture->texels[i] = Float4{rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], 1.0f};
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// 8-bit images through the OBJ loader's decoder: PNG by its encoding, everything else as sRGB (pbrt-v4's stb path).
std::string Decode8Bit(const std::string& bytes, const std::string& ext, const std::string& encoding,
                       Texture* texture) {
  const bool png = ext == "png";
  const bool linear = png && encoding != "sRGB";
  std::string why =
      loader::DecodeTexture(bytes, linear ? loader::TexelEncoding::kData : loader::TexelEncoding::kSrgb, 0, texture);
  if (!why.empty() || !linear || encoding == "linear") return why;
  float gamma = 0.0f;
  if (std::sscanf(encoding.c_str(), "gamma %f", &gamma) != 1 || !(gamma > 0.0f))
    return "has the unknown encoding \"" + encoding + "\" (sRGB, linear, gamma G)";
  for (Float4& t : texture->texels) t = Float4{std::pow(t.x, gamma), std::pow(t.y, gamma), std::pow(t.z, gamma), t.w};
  return "";
}

// A texture's own parameter that the renderer does not follow, warned once per kind.
void WarnIgnored(PbrtLoad& load, const PbrtTexture& t, const char* name, const std::string& value,
                 const std::string& what) {
  load.WarnKind(std::string("texture-") + name + ":" + value, t.loc,
                "texture \"" + t.name + "\": \"" + name + "\" " + value + " is not supported yet; " + what);
}

// Bakes fn(u, v) over [0, 1]^2 into a width x height image (texel centres, v = 0 at the bottom): a texture tree no
// single TextureMap can hold. Exact where every part repeats with period 1 in u and v, as uv mappings of integer
// scale do; the image's resolution bounds the detail.
int BakeImage(Scene& scene, const std::string& name, int width, int height,
              const std::function<Vec3(float, float)>& fn) {
  Texture baked;
  baked.path = "<baked texture " + name + ">";
  baked.width = width;
  baked.height = height;
  baked.texels.resize(size_t(width) * size_t(height));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const Vec3 c = fn((float(x) + 0.5f) / float(width), 1.0f - (float(y) + 0.5f) / float(height));
      baked.texels[size_t(y) * size_t(width) + size_t(x)] = Float4{c.x, c.y, c.z, 1.0f};
    }
  scene.textures.push_back(std::move(baked));
  return int(scene.textures.size()) - 1;
}

// A resolved node's value at (u, v).
Vec3 NodeValue(const Scene& scene, const PbrtTextures::Node& n, float u, float v) {
  return n.image < 0 ? n.factor : n.factor * SampleHostTexture(scene.textures[size_t(n.image)], n.options, u, v);
}

}  // namespace

std::string ReadPbrtImage(PbrtLoad& load, const std::string& written, const ImageRead& how, Texture* texture) {
  std::string resolved, bytes;
  LoadOptions options = load.options;
  options.maxFileBytes = std::min<size_t>(options.maxFileBytes, INT_MAX);  // stb takes an int length
  std::string why = loader::ReadSceneAsset(load.folders, {written}, options, &resolved, &bytes);
  if (!why.empty()) return why;
  texture->path = resolved;
  const std::string ext = LowerExtension(written);
  if (ext == "pfm")
    why = DecodePfm(bytes, texture);
  else if (ext == "hdr")
    why = DecodeHdr(bytes, texture);
  else if (ext == "exr")
    why = DecodeExr(resolved, texture);
  else
    why = Decode8Bit(bytes, ext, how.encoding, texture);
  if (!why.empty()) return why;
  for (const Float4& t : texture->texels)
    if (!std::isfinite(t.x) || !std::isfinite(t.y) || !std::isfinite(t.z)) return "holds a value that is not finite";
  if (how.firstChannel)
    for (Float4& t : texture->texels) t = Float4{t.x, t.x, t.x, t.x};
  return "";
}

Vec3 SampleHostTexture(const Texture& texture, const TextureOptions& o, float u, float v) {
  const TextureInfo info{0,           texture.width, texture.height, o.clamp ? 1 : 0, o.scale[0], o.scale[1],
                         o.offset[0], o.offset[1],   o.base,         o.gain,          1.0f,       0.0f};
  return SampleTextureIn(&info, texture.texels.data(), 0, u, v);
}

int PbrtTextures::LoadImage(const std::string& written, const ImageRead& how, const PbrtLoc& loc,
                            const std::string& what) {
  const std::string key = how.encoding + (how.firstChannel ? "|1|" : "|3|") + written;
  if (auto known = images_.find(key); known != images_.end()) return known->second;
  Texture texture;
  const std::string why = ReadPbrtImage(load_, written, how, &texture);
  int index = -1;
  if (why.empty()) {
    load_.scene.textures.push_back(std::move(texture));
    index = int(load_.scene.textures.size()) - 1;
  } else {
    load_.Warn(loc, what + ": image \"" + written + "\" " + why +
                        "; rendered without it (what uses it takes the "
                        "parameter's default)");
  }
  images_[key] = index;
  return index;
}

int PbrtTextures::MapOf(const Node& node) {
  const TextureOptions& o = node.options;
  const auto key =
      std::make_tuple(node.image, o.scale[0], o.scale[1], o.offset[0], o.offset[1], o.clamp, o.base, o.gain);
  auto [it, isNew] = maps_.emplace(key, 0);
  if (isNew) {
    it->second = int(load_.scene.textureMaps.size());
    load_.scene.textureMaps.push_back(TextureMap{node.image, o});
  }
  return it->second;
}

MappedTexture PbrtTextures::Mapped(const Node& node) {
  MappedTexture m;
  m.factor = node.factor;
  if (node.image >= 0) m.map = MapOf(node);
  return m;
}

int PbrtTextures::ImageMap(const std::string& written, const ImageRead& how, const PbrtLoc& loc,
                           const std::string& what) {
  Node node;
  node.image = LoadImage(written, how, loc, what);
  return node.image < 0 ? -1 : MapOf(node);
}

bool PbrtTextures::Spectrum(const PbrtParams& params, const std::string& name, SpectrumUse use, MappedTexture* out) {
  const PbrtParam* p = params.Find(name);
  if (!p) return false;
  if (p->type != PbrtParamType::kTexture) {
    Vec3 c;
    if (!SpectrumRgb(load_, params, name, use, &c)) return false;
    *out = MappedTexture{c, -1};
    return true;
  }
  const Node node = ResolveParam(params, name, false, Vec3(1.0f), 0);
  if (!node.ok) return false;
  *out = Mapped(node);
  if (use == SpectrumUse::kAlbedo) out->factor = Min(Max(out->factor, Vec3(0.0f)), Vec3(1.0f));
  return true;
}

bool PbrtTextures::Float(const PbrtParams& params, const std::string& name, MappedTexture* out) {
  const PbrtParam* p = params.Find(name);
  if (!p) return false;
  const Node node = ResolveParam(params, name, true, Vec3(1.0f), 0);
  if (!node.ok) return false;
  *out = Mapped(node);
  return true;
}

// A texture-valued or value parameter of a texture (tex, tex1, amount, scale ...), or the fallback when absent.
PbrtTextures::Node PbrtTextures::ResolveParam(const PbrtParams& params, const std::string& name, bool isFloat,
                                              Vec3 fallback, int depth) {
  Node node;
  node.factor = fallback;
  const PbrtParam* p = params.Find(name);
  if (!p) return node;
  if (p->type == PbrtParamType::kTexture) {
    const std::string& texName = p->strings.empty() ? std::string() : p->strings[0];
    const PbrtTexture* t = load_.pbrt.FindTexture(texName, isFloat);
    if (!t) {
      load_.Warn(p->loc, std::string("no ") + (isFloat ? "float" : "spectrum") + " texture named \"" + texName +
                             "\" (\"" + name + "\"); the parameter is ignored");
      node.ok = false;
      return node;
    }
    return Resolve(*t, depth + 1);
  }
  Vec3 c;
  if (isFloat && p->type == PbrtParamType::kFloat && !p->floats.empty())
    node.factor = Vec3(static_cast<float>(p->floats[0]));
  else if (!isFloat && SpectrumRgb(load_, params, name, SpectrumUse::kUnbounded, &c))
    node.factor = c;
  return node;
}

PbrtTextures::Node PbrtTextures::Resolve(const PbrtTexture& t, int depth) {
  if (auto known = resolved_.find(&t); known != resolved_.end()) return known->second;
  Node node;
  if (depth > kMaxTreeDepth) {
    load_.Warn(t.loc, "texture \"" + t.name + "\": nested deeper than " + std::to_string(kMaxTreeDepth) +
                          " textures (a cycle?); not used");
    node.ok = false;
    return node;
  }
  const std::string mapping = t.params.GetString("mapping", "uv");
  if (mapping != "uv")
    WarnIgnored(load_, t, "mapping", "\"" + mapping + "\"",
                "the uv mapping is used (a planar, spherical or cylindrical "
                "mapping needs texture coordinates from positions)");
  if (t.type == "imagemap") {
    node = ResolveImage(t);
  } else if (t.type == "constant") {
    node = ResolveParam(t.params, "value", t.isFloat, Vec3(1.0f), depth);
  } else if (t.type == "scale") {
    node = ResolveScale(t, depth);
  } else if (t.type == "mix") {
    node = ResolveMix(t, depth);
  } else if (t.type == "checkerboard") {
    node = ResolveCheckerboard(t, depth);
  } else {
    load_.WarnKind("texture-type:" + t.type, t.loc,
                   "texture \"" + t.name + "\": type \"" + t.type +
                       "\" is not supported yet (imagemap, scale, mix, constant and checkerboard are); materials "
                       "using it take the parameter's default");
    node.ok = false;
  }
  resolved_[&t] = node;
  return node;
}

PbrtTextures::Node PbrtTextures::ResolveImage(const PbrtTexture& t) {
  Node node;
  const std::string file = t.params.GetString("filename", "");
  ImageRead how;
  how.encoding = t.params.GetString("encoding", "sRGB");
  how.firstChannel = t.isFloat;
  node.image = file.empty() ? -1 : LoadImage(file, how, t.loc, "texture \"" + t.name + "\"");
  if (file.empty()) load_.Warn(t.loc, "texture \"" + t.name + "\": imagemap without a \"filename\"; not used");
  if (node.image < 0) {
    node.ok = false;
    return node;
  }
  // pbrt-v4's UVMapping: st = (uscale u + udelta, vscale v + vdelta), the same lookup as TextureOptions's -s/-o.
  TextureOptions& o = node.options;
  o.scale[0] = float(t.params.GetFloat("uscale", 1.0));
  o.scale[1] = float(t.params.GetFloat("vscale", 1.0));
  o.offset[0] = float(t.params.GetFloat("udelta", 0.0));
  o.offset[1] = float(t.params.GetFloat("vdelta", 0.0));
  // ImageTexture's value: scale * texel, or 1 - scale * texel with "invert".
  const float scale = float(t.params.GetFloat("scale", 1.0));
  const bool invert = t.params.GetBool("invert", false);
  o.base = invert ? 1.0f : 0.0f;
  o.gain = invert ? -scale : scale;
  const std::string wrap = t.params.GetString("wrap", "repeat");
  o.clamp = wrap != "repeat";
  if (wrap != "repeat" && wrap != "clamp")
    WarnIgnored(load_, t, "wrap", "\"" + wrap + "\"", "the edge texels extend (as for \"clamp\")");
  return node;
}

// Resolved children combined texel by texel into a baked image, sized by the finest child.
PbrtTextures::Node PbrtTextures::ResolveScale(const PbrtTexture& t, int depth) {
  Node tex = ResolveParam(t.params, "tex", t.isFloat, Vec3(1.0f), depth);
  const Node scale = ResolveParam(t.params, "scale", true, Vec3(1.0f), depth);
  if (!tex.ok || !scale.ok) return Failed();
  if (scale.image < 0 || tex.image < 0) {  // a constant on either side: a factor
    Node out = scale.image < 0 ? tex : scale;
    out.factor = tex.factor * scale.factor;
    return out;
  }
  const Scene& scene = load_.scene;
  return Bake(t, "a product of two image textures", {&tex, &scale}, 0,
              [&](float u, float v) { return NodeValue(scene, tex, u, v) * NodeValue(scene, scale, u, v); });
}

PbrtTextures::Node PbrtTextures::Bake(const PbrtTexture& t, const std::string& what,
                                      std::initializer_list<const Node*> parts, int minSide,
                                      const std::function<Vec3(float, float)>& fn) {
  int w = std::max(kMinBakedSide, minSide), h = w;
  for (const Node* n : parts)
    if (n->image >= 0) {
      const Texture& image = load_.scene.textures[size_t(n->image)];
      w = std::max(w, image.width), h = std::max(h, image.height);
    }
  w = std::min(w, kMaxBakedSide), h = std::min(h, kMaxBakedSide);
  load_.WarnKind("texture-baked", t.loc,
                 "texture \"" + t.name + "\": " + what + ", baked into a " + std::to_string(w) + "x" +
                     std::to_string(h) + " image over uv [0,1]^2 (the renderer's textures are single images)");
  Node out;
  out.image = BakeImage(load_.scene, t.name, w, h, fn);
  return out;
}

PbrtTextures::Node PbrtTextures::ResolveMix(const PbrtTexture& t, int depth) {
  // MixTexture: (1 - amount) tex1 + amount tex2; tex1 defaults to 0, tex2 to 1, amount to 0.5.
  const Node tex1 = ResolveParam(t.params, "tex1", t.isFloat, Vec3(0.0f), depth);
  const Node tex2 = ResolveParam(t.params, "tex2", t.isFloat, Vec3(1.0f), depth);
  const Node amount = ResolveParam(t.params, "amount", true, Vec3(0.5f), depth);
  if (!tex1.ok || !tex2.ok || !amount.ok) return Failed();
  if (amount.image < 0) {
    const float a = amount.factor.x;
    if (a <= 0.0f) return tex1;
    if (a >= 1.0f) return tex2;
    if (tex1.image < 0 && tex2.image < 0) {
      Node out;
      out.factor = tex1.factor * (1.0f - a) + tex2.factor * a;
      return out;
    }
  }
  const Scene& scene = load_.scene;
  return Bake(t, "a mix of textures", {&tex1, &tex2, &amount}, 0, [&](float u, float v) {
    const float a = NodeValue(scene, amount, u, v).x;
    return NodeValue(scene, tex1, u, v) * (1.0f - a) + NodeValue(scene, tex2, u, v) * a;
  });
}

PbrtTextures::Node PbrtTextures::ResolveCheckerboard(const PbrtTexture& t, int depth) {
  if (t.params.GetInt("dimension", 2) != 2) {
    load_.WarnKind("texture-checkerboard-3d", t.loc,
                   "texture \"" + t.name +
                       "\": a 3D checkerboard is not supported yet; materials using it take the "
                       "parameter's default");
    return Failed();
  }
  // Checkerboard (2D, pbrt-v4 textures.cpp): tex1 where floor(s) + floor(t) is even, else tex2; tex1 defaults to 1,
  // tex2 to 0; (s, t) from the uv mapping. Baked over one period of the mapping when its scales are integers.
  const Node tex1 = ResolveParam(t.params, "tex1", t.isFloat, Vec3(1.0f), depth);
  const Node tex2 = ResolveParam(t.params, "tex2", t.isFloat, Vec3(0.0f), depth);
  if (!tex1.ok || !tex2.ok) return Failed();
  const float su = float(t.params.GetFloat("uscale", 1.0)), sv = float(t.params.GetFloat("vscale", 1.0));
  const float du = float(t.params.GetFloat("udelta", 0.0)), dv = float(t.params.GetFloat("vdelta", 0.0));
  const int side = int(std::min(std::ceil(double(std::max(std::fabs(su), std::fabs(sv)))) * kBakedTexelsPerCheck,
                                double(kMaxBakedSide)));
  const Scene& scene = load_.scene;
  return Bake(t, "a checkerboard", {&tex1, &tex2}, side, [&](float u, float v) {
    const int parity = int(std::floor(su * u + du) + std::floor(sv * v + dv)) & 1;
    return parity == 0 ? NodeValue(scene, tex1, u, v) : NodeValue(scene, tex2, u, v);
  });
}

}  // namespace tracer::pbrtload

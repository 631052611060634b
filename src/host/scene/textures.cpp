// @file textures.cpp: texture files decoded to linear texels, and the TextureMaps (image, options) materials use.
#include "textures.h"

#include <stb/stb_image.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "scene_text.h"

namespace tracer {
namespace loader {
namespace {

constexpr int kMaxTextureSide = 16384;  // larger textures are refused (memory, not quality)

float SrgbToLinear(float c) { return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f); }

}  // namespace

std::string DecodeTexture(const std::string& bytes, TexelEncoding encoding, char channel, Texture* texture) {
  static const std::array<float, 256> kSrgbTable = [] {
    std::array<float, 256> table;
    for (int i = 0; i < 256; ++i) table[i] = SrgbToLinear(float(i) / 255.0f);
    return table;
  }();
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  int width, height, channels;
  if (!stbi_info_from_memory(data, int(bytes.size()), &width, &height, &channels))
    return std::string("cannot be decoded: ") + stbi_failure_reason();
  if (width > kMaxTextureSide || height > kMaxTextureSide)
    return "is " + std::to_string(width) + "x" + std::to_string(height) + "; the limit is " +
           std::to_string(kMaxTextureSide) + " per side";
  stbi_uc* pixels = stbi_load_from_memory(data, int(bytes.size()), &width, &height, &channels, 4);
  const bool hasAlpha = channels == 2 || channels == 4;  // grey + alpha, or RGBA, in the file
  if (!pixels) return std::string("cannot be decoded: ") + stbi_failure_reason();
  texture->width = width;
  texture->height = height;
  texture->texels.resize(size_t(width) * size_t(height));
  for (size_t i = 0; i < texture->texels.size(); ++i) {
    const stbi_uc* p = pixels + 4 * i;  // stb's row 0 is the top row, as we store it
    if (channel && encoding != TexelEncoding::kSrgb) {
      const float v = channel == 'g'   ? float(p[1]) / 255.0f
                      : channel == 'b' ? float(p[2]) / 255.0f
                      : channel == 'm' ? (hasAlpha ? float(p[3]) / 255.0f : 1.0f)
                      : channel == 'l'
                          ? (0.2126f * float(p[0]) + 0.7152f * float(p[1]) + 0.0722f * float(p[2])) / 255.0f
                          : float(p[0]) / 255.0f;
      texture->texels[i] = Float4{v, v, v, v};
      continue;
    }
    const float a = float(hasAlpha ? p[3] : p[0]) / 255.0f;
    texture->texels[i] =
        encoding == TexelEncoding::kOpacity ? Float4{a, a, a, a}
        : encoding == TexelEncoding::kSrgb
            ? Float4{kSrgbTable[p[0]], kSrgbTable[p[1]], kSrgbTable[p[2]], float(p[3]) / 255.0f}
            : Float4{float(p[0]) / 255.0f, float(p[1]) / 255.0f, float(p[2]) / 255.0f, float(p[3]) / 255.0f};
  }
  stbi_image_free(pixels);
  return "";
}

namespace {

// The image a statement names, read and decoded at most once per encoding; -1 after a warning.
int LoadImage(Scene& scene, TextureCache& cache, const AssetFolders& folders, const std::string& key,
              const TextureStatement& statement, const MtlOrigin& origin, const LoadOptions& options,
              TexelEncoding encoding) {
  const std::string& name = statement.name;
  const char* const kPrefixes[] = {"srgb:", "data:", "opacity:"};
  // -imfchan picks one channel of a scalar map (data, opacity); a colour map keeps its three.
  const char channel = encoding == TexelEncoding::kSrgb ? 0 : statement.options.channel;
  if (statement.options.channel && !channel)
    Warn(scene, origin.path, statement.line,
         "material " + Quote(origin.name) + ": " + key +
             " -imfchan applies to scalar maps (bump, map_d, map_Ns, ...); ignored on a colour map");
  if (channel == 'z')
    Warn(scene, origin.path, statement.line,
         "material " + Quote(origin.name) + ": " + key +
             " -imfchan z: the image has no depth channel; its first channel is read");
  const std::string prefix = std::string(kPrefixes[static_cast<int>(encoding)]) +
                             (channel ? std::string("imfchan ") + channel + ":" : std::string()),
                    nameKey = prefix + name;
  if (auto known = cache.byName.find(nameKey); known != cache.byName.end()) return known->second;
  if (auto failed = cache.failedName.find(nameKey); failed != cache.failedName.end()) {
    failed->second.more++;
    return -1;
  }
  std::string resolved, bytes;
  LoadOptions textureOptions = options;
  textureOptions.maxFileBytes = std::min<size_t>(options.maxFileBytes, INT_MAX);  // stb takes an int length
  std::string why = ReadSceneAsset(folders, {name}, textureOptions, &resolved, &bytes);
  int index = -1;
  if (why.empty()) {
    if (auto known = cache.byPath.find(prefix + resolved); known != cache.byPath.end()) {
      index = known->second;  // the same file under another name ("a.png", ".\a.png")
    } else {
      Texture texture;
      texture.path = resolved;
      why = DecodeTexture(bytes, encoding, channel, &texture);
      if (why.empty()) {
        scene.textures.push_back(std::move(texture));
        index = int(scene.textures.size()) - 1;
        cache.byPath[prefix + resolved] = index;
      }
    }
  }
  if (index < 0) {
    cache.failedName[nameKey] = TextureCache::Failure{scene.warnings.size()};
    Warn(scene, origin.path, statement.line,
         "material " + Quote(origin.name) + ": " + key + " " + Quote(name) + " " + why + "; " +
             (key == "map_Kd" ? "using Kd without a texture" : "ignored"));
    return -1;
  }
  cache.byName[nameKey] = index;
  return index;
}

}  // namespace

int LoadTexture(Scene& scene, TextureCache& cache, const AssetFolders& folders, const std::string& key,
                const TextureStatement& statement, const MtlOrigin& origin, const LoadOptions& options,
                TexelEncoding encoding) {
  // -colorspace: a colour map read as linear values, or a data map sRGB-decoded (with -imfchan, a channel is data).
  const char colorspace = statement.options.colorspace;
  if (colorspace == 'l' && encoding == TexelEncoding::kSrgb) encoding = TexelEncoding::kData;
  if (colorspace == 's' && encoding == TexelEncoding::kData && !statement.options.channel)
    encoding = TexelEncoding::kSrgb;
  if (colorspace && encoding == TexelEncoding::kOpacity)
    Warn(scene, origin.path, statement.line,
         "material " + Quote(origin.name) + ": " + key + " -colorspace: an opacity is read as data; ignored");
  const int image = LoadImage(scene, cache, folders, key, statement, origin, options, encoding);
  if (image < 0) return -1;
  const TextureOptions& o = statement.options;
  const std::array<float, 8> values = {o.scale[0], o.scale[1], o.offset[0],      o.offset[1],
                                       o.base,     o.gain,     o.bumpMultiplier, 0.0f};
  auto [it, isNew] = cache.maps.emplace(std::make_tuple(image, values, o.clamp, o.channel), 0);
  if (isNew) {
    it->second = int(scene.textureMaps.size());
    scene.textureMaps.push_back(TextureMap{image, o});
  }
  return it->second;
}

}  // namespace loader

std::array<double, 3> MeanTexel(const Texture& texture) {
  std::array<double, 3> sum = {0.0, 0.0, 0.0};
  for (const Float4& x : texture.texels) sum[0] += x.x, sum[1] += x.y, sum[2] += x.z;
  const double n = std::max<double>(1.0, static_cast<double>(texture.texels.size()));
  return {sum[0] / n, sum[1] / n, sum[2] / n};
}

}  // namespace tracer

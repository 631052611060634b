// @file textures.h: the images that an MTL's texture statements name, each read and decoded once per scene.
#pragma once
#include <array>
#include <map>
#include <string>
#include <tuple>

#include "mtl_scan.h"
#include "scene_files.h"
#include "tracer/host/scene_loader.h"

namespace tracer::loader {

// How a texture's 8-bit values are read: colour (sRGB-decoded to linear RGB: map_Kd), data (value / 255: the
// scalar maps map_Ks and map_Ns, which Blender reads as non-colour data), or opacity (map_d: the image's alpha
// channel if it has one, else its first channel, / 255, in all four components).
enum class TexelEncoding { kSrgb, kData, kOpacity };

// Decodes an image file's bytes (any 8-bit format stb_image reads) as linear values (alpha in w). Returns an empty
// string, or why it cannot be used. `channel` (-imfchan, data and opacity maps only; 0 = none) picks the one channel
// a scalar map reads, in every component: r, g or b; m (matte) the alpha channel, 1 without one; l the luminance of
// r, g, b (Rec. 709 weights, on the file's values); z, which 8-bit images do not have, the first channel.
std::string DecodeTexture(const std::string& bytes, TexelEncoding encoding, char channel, Texture* texture);

// What the texture statements of a scene loaded so far: each file is read and decoded once, each (file, options)
// pair is one TextureMap, and a file that cannot be used is reported once, with the number of statements naming it.
struct TextureCache {
  struct Failure {
    size_t warning;   // index into Scene::warnings
    size_t more = 0;  // later statements naming the same file
  };
  // Keys are prefixed with the encoding ("srgb:", "data:"): a file read as colour and as data is two images.
  std::map<std::string, int> byName;          // name as written -> index into Scene::textures
  std::map<std::string, int> byPath;          // real path -> index into Scene::textures
  std::map<std::string, Failure> failedName;  // name as written -> its warning
  std::map<std::tuple<int, std::array<float, 8>, bool, char>, int> maps;  // (image, options) -> TextureMap

  // Amends each failure's warning with the count of the other statements that named the file.
  void Finish(Scene& scene) const {
    for (const auto& [name, failure] : failedName)
      if (failure.more)
        scene.warnings[failure.warning] += " (" + std::to_string(failure.more) + " more " +
                                           (failure.more == 1 ? "statement names" : "statements name") + " it)";
  }
};

// The TextureMap of a statement (an image and its options): index into Scene::textureMaps, or -1 after a warning.
int LoadTexture(Scene& scene, TextureCache& cache, const AssetFolders& folders, const std::string& key,
                const TextureStatement& statement, const MtlOrigin& origin, const LoadOptions& options,
                TexelEncoding encoding = TexelEncoding::kSrgb);

}  // namespace tracer::loader

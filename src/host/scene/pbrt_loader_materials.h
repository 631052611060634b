// @file pbrt_loader_materials.h: pbrt-v4's materials mapped onto the renderer's classes (core/material.h) as
// faithfully as they allow; the inexact mappings are warned once per kind (docs/FORMATS.md has the table).
#pragma once
#include <map>

#include "pbrt_loader.h"
#include "pbrt_loader_textures.h"

namespace tracer::pbrtload {

struct MappedMaterial {
  HostMaterial material;   // without emission: area lights add it per shape; a mix's mixA and mixB are indices
                           // into PbrtScene::materials (the shapes' builder turns them into the Scene's)
  bool interface = false;  // "interface" (or none): no surface; its shapes are left out, as pbrt-v4 does
};

// PbrtScene::materials mapped on first use, so that a material no shape uses costs no image read and no warning.
class PbrtMaterials {
 public:
  PbrtMaterials(PbrtLoad& load, PbrtTextures& textures) : load_(load), textures_(textures) {}
  // The mapping of PbrtScene::materials[index].
  const MappedMaterial& Get(int index);

 private:
  PbrtLoad& load_;
  PbrtTextures& textures_;
  std::map<int, MappedMaterial> mapped_;
};

// pbrt-v4's TrowbridgeReitzDistribution::RoughnessToAlpha (src/pbrt/util/scattering.h): alpha = sqrt(roughness)
// when "remaproughness" is true (its default), else the roughness itself.
float RoughnessToAlpha(float roughness, bool remap);

}  // namespace tracer::pbrtload

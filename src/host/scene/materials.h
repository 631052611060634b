// @file materials.h: the MTL's materials as the BSDFs read them, with their textures, in the Scene.
#pragma once
#include <tiny_obj_loader.h>

#include <string>
#include <vector>

#include "mtl_reader.h"
#include "obj_scan.h"
#include "scene_files.h"
#include "tracer/host/scene_loader.h"

namespace tracer::loader {

// Materials in file order (textures loaded once each), and undefined usemtl names reported at their line.
void AddMaterials(Scene& scene, const std::string& path, const AssetFolders& folders,
                  const std::vector<tinyobj::material_t>& objMaterials, const GuardedMaterialReader& reader,
                  const ObjScan& scan, const LoadOptions& options);

}  // namespace tracer::loader

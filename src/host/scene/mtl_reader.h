// @file mtl_reader.h: the MTL files an OBJ names, loaded by tinyobjloader behind our path rules and our MTL scan.
#pragma once
#include <tiny_obj_loader.h>

#include <exception>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "mtl_scan.h"
#include "obj_scan.h"
#include "scene_files.h"
#include "tracer/host/scene_loader.h"

namespace tracer::loader {

// Serves mtllib requests from tinyobjloader under our path rules, pre-validating each MTL.
class GuardedMaterialReader : public tinyobj::MaterialReader {
 public:
  GuardedMaterialReader(Scene& scene, const AssetFolders& folders, const ObjScan& scan, const LoadOptions& options)
      : scene_(scene), folders_(folders), scan_(scan), options_(options) {}

  bool operator()(const std::string& matId, std::vector<tinyobj::material_t>* materials,
                  std::map<std::string, int>* matMap, std::string* warn, std::string* err) override;

  // The MTL errors we held back, if any.
  void RethrowPending() const {
    if (error_) std::rethrow_exception(error_);
  }
  const std::vector<MtlOrigin>& Origins() const { return origins_; }

 private:
  Scene& scene_;
  const AssetFolders& folders_;
  const ObjScan& scan_;
  const LoadOptions& options_;
  std::vector<MtlOrigin> origins_;  // parallel to tinyobjloader's materials
  std::set<std::string> warnedOptions_;
  std::exception_ptr error_;
};

// The materials of the MTL files the OBJ names, loaded as tinyobjloader loads them: each mtllib line tries its names in
// turn until one loads (a name loaded before is skipped); and the material each usemtl statement selects: the first
// of that name among the materials of the mtllib lines above it, else -1 (the default).
std::vector<int> LoadObjMaterials(const ObjScan& scan, tinyobj::MaterialReader& reader,
                                  std::vector<tinyobj::material_t>* materials);

}  // namespace tracer::loader

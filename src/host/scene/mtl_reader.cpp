// @file mtl_reader.cpp: the MTL files served to tinyobjloader, and the materials its mtllib and usemtl rules select.
#include "mtl_reader.h"

#include <cstdint>
#include <istream>

#include "scene_text.h"

namespace tracer::loader {

bool GuardedMaterialReader::operator()(const std::string& matId, std::vector<tinyobj::material_t>* materials,
                                       std::map<std::string, int>* matMap, std::string* warn, std::string* err) {
  if (error_) return false;  // a fatal MTL error is pending: load nothing more
  auto lineIt = scan_.mtllibLine.find(matId);
  size_t line = lineIt == scan_.mtllibLine.end() ? 0 : lineIt->second;
  std::string resolved, text;
  auto writtenIt = scan_.mtllibWritten.find(matId);
  std::vector<std::string> names{matId};
  if (writtenIt != scan_.mtllibWritten.end()) names.push_back(writtenIt->second);
  std::string why = ReadSceneAsset(folders_, names, options_, &resolved, &text);
  if (!why.empty()) {
    Warn(scene_, scene_.path, line, "mtllib " + Quote(matId) + " " + why + "; using the default material");
    return false;
  }
  try {
    std::vector<MtlOrigin> found = ScanMtl(resolved, text, scene_, warnedOptions_);
    size_t before = materials->size();
    MemoryBuf buf(text);
    std::istream stream(&buf);
    tinyobj::LoadMtl(matMap, materials, &stream, warn, err);
    // Pair our records with tinyobjloader's materials; if the counts disagree, keep only the path.
    for (size_t i = before; i < materials->size(); ++i) {
      bool aligned = materials->size() - before == found.size() && found[i - before].name == (*materials)[i].name;
      MtlOrigin origin;
      if (aligned) {
        origin = found[i - before];
        ApplyColourStatements(origin, &(*materials)[i]);
      } else {
        origin.path = resolved;
        origin.name = (*materials)[i].name;
      }
      origins_.push_back(origin);
    }
  } catch (const SceneError&) {
    error_ = std::current_exception();  // thrown after LoadObj returns, not through the library
    return false;
  }
  return true;
}

std::vector<int> LoadObjMaterials(const ObjScan& scan, tinyobj::MaterialReader& reader,
                                  std::vector<tinyobj::material_t>* materials) {
  std::map<std::string, int> byName;
  std::set<std::string> loaded;
  size_t next = 0;  // the next mtllib statement
  auto loadUpTo = [&](size_t line) {
    for (; next < scan.mtllib.size() && scan.mtllib[next].first < line; ++next)
      for (const std::string& file : scan.mtllib[next].second) {
        if (loaded.count(file)) continue;
        std::string warn, err;  // the reader reports through the Scene's warnings
        if (reader(file, materials, &byName, &warn, &err)) {
          loaded.insert(file);
          break;
        }
      }
  };
  std::vector<int> useMaterial;
  useMaterial.reserve(scan.usemtl.size());
  for (const auto& [line, name] : scan.usemtl) {
    loadUpTo(line);
    const auto it = byName.find(name);
    useMaterial.push_back(it == byName.end() ? -1 : it->second);
  }
  loadUpTo(SIZE_MAX);
  return useMaterial;
}

}  // namespace tracer::loader

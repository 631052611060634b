// @file mtl_scan.h: our checks of an MTL before tinyobjloader may see it, and our parse of its texture statements.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tracer/host/scene_loader.h"

namespace tracer::loader {

// A texture statement of an MTL (map_Kd, map_Bump, bump, norm, ...): the file it names and its options, parsed here
// rather than by tinyobjloader, which reports no line and reads an unknown option as part of the file name.
struct TextureStatement {
  std::string name;  // as written (a Windows path's backslashes kept; may hold spaces)
  TextureOptions options;
  size_t line = 0;
};

// What tinyobjloader's material_t cannot tell us: where a material is, and which keys it wrote.
struct MtlOrigin {
  std::string path, name;
  size_t line = 0;
  bool hasTf = false;    // tinyobjloader's Tf default is 0 0 0, which would read as "tinted glass"
  bool hasD = false;     // without d, tinyobjloader reads Tr as 1 - d; we ignore Tr altogether
  bool hasNs = false;    // tinyobjloader's Ns default is 1 (very rough); Blender reads "no Ns" by illum
  bool hasNi = false;    // tinyobjloader's Ni default is 1 (no specular); Blender's IOR default is 1.5
  bool scanned = false;  // from our scan (else only path and name are known: see GuardedMaterialReader)
  std::map<std::string, TextureStatement> maps;  // by keyword as written; the last statement of a keyword wins
};

// Checks that every number on a numeric MTL line is finite, parses texture statements, and records one MtlOrigin
// per newmtl with a name, in the order tinyobjloader appends materials. `warned`: the texture options warned about.
std::vector<MtlOrigin> ScanMtl(const std::string& path, const std::string& text, Scene& scene,
                               std::set<std::string>& warned);

}  // namespace tracer::loader

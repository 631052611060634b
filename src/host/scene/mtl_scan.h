// @file mtl_scan.h: our checks of an MTL before tinyobjloader may see it, and our parse of its texture statements.
#pragma once
#include <tiny_obj_loader.h>

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

// How a colour statement (Ka, Kd, Ks, Ke, Kt, Tf) was written, where tinyobjloader's reading of it is not the MTL
// format's: "Kd r" is grey (the format: g and b default to r; tinyobjloader: to 0), and "Kd xyz x y z" is CIE XYZ.
struct ColourStatement {
  enum Form { kRgb, kGrey, kXyz } form = kRgb;
  Vec3 rgb;  // kXyz: the colour in linear sRGB
};

// What tinyobjloader's material_t cannot tell us: where a material is, and which keys it wrote.
struct MtlOrigin {
  std::string path, name;
  size_t line = 0;
  bool hasTf = false;    // tinyobjloader's Tf default is 0 0 0, which would read as "tinted glass"
  bool hasD = false;     // without d, tinyobjloader reads Tr as 1 - d; we ignore Tr altogether
  bool hasNs = false;    // tinyobjloader's Ns default is 1 (very rough); Blender reads "no Ns" by illum
  bool hasNi = false;    // tinyobjloader's Ni default is 1 (no specular); Blender's IOR default is 1.5
  bool hasPr = false;    // the PBR extension's roughness, which replaces Ns's (Blender's importer)
  bool hasPm = false;    // the PBR extension's metallic
  bool hasPcr = false;   // the coat's roughness (without it, Blender's default Coat Roughness 0.03)
  bool scanned = false;  // from our scan (else only path and name are known: see GuardedMaterialReader)
  std::map<std::string, TextureStatement> maps;  // by keyword as written; the last statement of a keyword wins
  float haloOpacity = -1.0f;  // "d -halo f": f (tinyobjloader reads the word as 0); -1 when d was written without it
  std::map<std::string, ColourStatement> colours;  // by keyword (Kt as Tf); the last statement of a keyword wins
  // The material's statements after newmtl, blanks and comments dropped: two definitions of a name with the same
  // body (and folder) are one material written twice.
  std::string body;
};

// Checks every numeric MTL statement as strictly as the OBJ parser checks its own (SceneError naming the file and
// line for a malformed number, a wrong count, trailing words or a value out of the format's range), parses texture
// statements, and records one MtlOrigin per newmtl with a name, in the order tinyobjloader appends materials.
// Unknown statements are warned about once per scene each. `warned`: what was
// warned about so far (texture options, statements).
std::vector<MtlOrigin> ScanMtl(const std::string& path, const std::string& text, Scene& scene,
                               std::set<std::string>& warned);

// Corrects tinyobjloader's reading of the colour statements `origin` recorded (ColourStatement) and of d -halo.
void ApplyColourStatements(const MtlOrigin& origin, tinyobj::material_t* material);

}  // namespace tracer::loader

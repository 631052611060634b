// @file mtl_scan.cpp: the MTL's checks, line by line, and its texture statements with their options.
#include "mtl_scan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string_view>

#include "scene_text.h"

namespace tracer::loader {
namespace {

bool IsTextureKey(std::string_view key) {
  return key.substr(0, 4) == "map_" || key == "bump" || key == "norm" || key == "disp" || key == "decal" ||
         key == "refl";
}

// Parses "KEY [-option values]... FILE NAME" (the file name is the rest of the line, as tinyobjloader reads it).
// -s, -o, -clamp, -mm, -bm and -imfchan are kept (and applied); -blendu/-blendv (blending of several textures) are read
// and have nothing to do; the other options of the format, and unknown ones, are skipped with one warning per option
// and scene (`warned`). A malformed value of a known option is an error naming the line.
class TextureStatementParser {
 public:
  TextureStatementParser(Scene& scene, const std::string& path, size_t line, std::set<std::string>& warned)
      : scene_(scene), path_(path), line_(line), warned_(warned) {}

  // false (after a warning) when the statement names no file.
  bool Parse(std::string_view text, const std::vector<std::string_view>& tokens, TextureStatement* out) {
    tokens_ = &tokens;
    key_ = std::string(tokens[0]);
    out->line = line_;
    size_t i = 1;
    while (i + 1 < tokens.size() && tokens[i].size() > 1 && tokens[i][0] == '-') {
      const std::string option(tokens[i++]);
      TextureOptions& o = out->options;
      if (option == "-s" || option == "-o") {
        float v[3] = {0.0f, 0.0f, 0.0f};
        const size_t n = Numbers(option, &i, 1, 3, v);
        float* dst = option == "-s" ? o.scale : o.offset;
        dst[0] = v[0];
        dst[1] = n > 1 ? v[1] : (option == "-s" ? 1.0f : 0.0f);  // the format's defaults for v: 1 and 0
      } else if (option == "-mm") {
        float v[2] = {0.0f, 1.0f};
        Numbers(option, &i, 1, 2, v);
        o.base = v[0];
        o.gain = v[1];
      } else if (option == "-bm") {
        Numbers(option, &i, 1, 1, &o.bumpMultiplier);
      } else if (option == "-clamp") {
        o.clamp = OnOff(option, &i);
      } else if (option == "-blendu" || option == "-blendv") {
        OnOff(option, &i);
      } else if (option == "-imfchan") {
        const std::string_view c = tokens[i++];
        if (c.size() != 1 || std::string_view("rgbmlz").find(c[0]) == std::string_view::npos)
          Fail(path_, line_, key_ + " -imfchan " + Quote(c) + ": expected one of r, g, b, m, l, z");
        o.channel = c[0];
      } else if (option == "-cc") {
        OnOff(option, &i);
        WarnOnce(option, "(colour correction) is not supported; ignored");
      } else if (option == "-boost" || option == "-texres" || option == "-t") {
        float v[3];
        Numbers(option, &i, 1, option == "-t" ? 3 : 1, v);
        WarnOnce(option, "is not supported; ignored");
      } else if (option == "-colorspace") {
        std::string c(tokens[i++]);
        std::transform(c.begin(), c.end(), c.begin(), [](unsigned char ch) { return std::tolower(ch); });
        if (c != "linear" && c != "srgb")
          Fail(path_, line_, key_ + " -colorspace " + Quote(tokens[i - 1]) + ": expected linear or sRGB");
        o.colorspace = c == "linear" ? 'l' : 's';
      } else if (option == "-type") {
        ++i;
        WarnOnce(option, "is not supported; ignored");
      } else {
        // Unknown: its values cannot be told from the file name by their count, only by their look.
        while (i + 1 < tokens.size() && (IsNumber(tokens[i]) || tokens[i] == "on" || tokens[i] == "off")) ++i;
        WarnOnce(option, "is not a texture option of the MTL format; it and the numbers after it are ignored");
      }
    }
    if (i >= tokens.size()) {
      Warn(scene_, path_, line_, key_ + " names no file; ignored");
      return false;
    }
    std::string_view name = text.substr(static_cast<size_t>(tokens[i].data() - text.data()));
    out->name = std::string(name.substr(0, name.find_last_not_of(" \t") + 1));
    return true;
  }

 private:
  static bool IsNumber(std::string_view token) {
    float v;
    return ParseNumber(token, &v) != NumberKind::kNotNumber;
  }
  // Reads lo..hi numbers from *i on, leaving the last token for the file name.
  size_t Numbers(const std::string& option, size_t* i, size_t lo, size_t hi, float* out) {
    const std::vector<std::string_view>& tokens = *tokens_;
    size_t n = 0;
    for (; n < hi && *i + 1 < tokens.size(); ++n, ++*i) {
      const NumberKind kind = ParseNumber(tokens[*i], &out[n]);
      if (kind == NumberKind::kNotNumber) break;
      if (kind == NumberKind::kNonFinite)
        Fail(path_, line_, key_ + " " + option + ": " + Quote(tokens[*i]) + " is not finite");
    }
    if (n < lo)
      Fail(path_, line_,
           key_ + " " + option + " needs " +
               (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
               (hi == 1 ? " number" : " numbers") + " before the file name");
    return n;
  }
  bool OnOff(const std::string& option, size_t* i) {
    const std::string_view v = (*tokens_)[*i];
    if (v != "on" && v != "off") Fail(path_, line_, key_ + " " + option + " needs on or off, not " + Quote(v));
    ++*i;
    return v == "on";
  }
  void WarnOnce(const std::string& option, const std::string& what) {
    if (warned_.insert(option).second)
      Warn(scene_, path_, line_, key_ + ": texture option " + Quote(option) + " " + what + " (reported once)");
  }

  Scene& scene_;
  const std::string& path_;
  size_t line_;
  std::set<std::string>& warned_;
  const std::vector<std::string_view>* tokens_ = nullptr;
  std::string key_;
};

// The numeric statements of one MTL, checked as the OBJ parser checks its own: every number well formed and finite,
// as many as the statement takes and no more (a '#' starts a comment), and within the format's range. The MTL
// format (Wavefront's "MTL material format", Alias 1995) and Blender's exporter's PBR keys.
class NumericStatements {
 public:
  NumericStatements(Scene& scene, const std::string& path, std::set<std::string>& warned)
      : scene_(scene), path_(path), warned_(warned) {}

  // False when `key` is no numeric statement of the format.
  bool Check(size_t line, const std::vector<std::string_view>& tokens, MtlOrigin* origin) {
    line_ = line;
    key_ = std::string(tokens[0]);
    values_.assign(tokens.begin() + 1,
                   std::find_if(tokens.begin() + 1, tokens.end(), [](std::string_view t) { return t[0] == '#'; }));
    // A statement the renderer does not use cannot change the image: a flaw in it is warned about, not refused
    // (the sports car of McGuire's archive writes "Ka 0.0000 0.0000 0.0000c").
    used_ = !(key_ == "Ka" || key_ == "sharpness");
    try {
      return CheckValues(origin);
    } catch (const UnusedStatement&) {
      return true;
    }
  }

 private:
  struct UnusedStatement {};

  // Throws SceneError naming the line, or for an unused statement warns (once per keyword) and skips it.
  [[noreturn]] void Bad(const std::string& message) {
    if (used_) Fail(path_, line_, message);
    if (warned_.insert("bad:" + key_).second)
      Warn(scene_, path_, line_, message + "; " + key_ + " is not used, so the statement is ignored (reported once)");
    throw UnusedStatement{};
  }

  bool CheckValues(MtlOrigin* origin) {
    if (key_ == "Ka" || key_ == "Kd" || key_ == "Ks" || key_ == "Ke" || key_ == "Kt" || key_ == "Tf") {
      const ColourStatement colour = Colour();
      if (origin) origin->colours[key_ == "Kt" ? "Tf" : key_] = colour;
      if (origin && (key_ == "Tf" || key_ == "Kt")) origin->hasTf = true;
    } else if (key_ == "Ns" || key_ == "sharpness") {
      One(0.0f, kInf, "an exponent >= 0");
      if (origin && key_ == "Ns") origin->hasNs = true;
    } else if (key_ == "Ni") {
      One(-kInf, kInf, "an index of refraction");  // <= 0 is warned about (and replaced) with the material
      if (origin) origin->hasNi = true;
    } else if (key_ == "d") {
      const bool halo = !values_.empty() && values_[0] == "-halo";  // (the dependence on the angle is not rendered)
      if (halo) values_.erase(values_.begin());
      const float d = One(0.0f, 1.0f, "an opacity in [0, 1] (1: opaque)");
      if (origin) origin->hasD = true, origin->haloOpacity = halo ? d : -1.0f;
    } else if (key_ == "Tr") {
      // Not of the format, nor read here (d is the opacity); exporters write "Tr 0 0" (McGuire's archive), so
      // more numbers than one are warned about, not refused.
      if (values_.size() > 1 && Trailing(1).empty() && warned_.insert("Tr count").second)
        Warn(scene_, path_, line_,
             "Tr takes one number, not " + std::to_string(values_.size()) +
                 "; Tr is not used (d is the opacity) (reported once)");
      values_.resize(std::min<size_t>(values_.size(), 1));
      One(0.0f, 1.0f, "a transparency in [0, 1] (0: opaque)");
    } else if (key_ == "illum") {
      const float v = One(0.0f, 10.0f, "an illumination model, 0 to 10");
      if (v != std::floor(v)) Bad("illum " + Quote(values_[0]) + ": expected a whole number, 0 to 10");
    } else if (key_ == "Pr" || key_ == "Pm") {
      One(0.0f, 1.0f, key_ == "Pr" ? "a roughness in [0, 1]" : "a metallic weight in [0, 1]");
      if (origin) (key_ == "Pr" ? origin->hasPr : origin->hasPm) = true;
    } else if (key_ == "Ps" || key_ == "Pcr" || key_ == "aniso" || key_ == "anisor") {
      // Blender's Principled BSDF's Sheen Weight, Coat Roughness, Anisotropic and Anisotropic Rotation (in turns).
      One(0.0f, 1.0f,
          key_ == "Ps"      ? "a sheen weight in [0, 1]"
          : key_ == "Pcr"   ? "a roughness in [0, 1]"
          : key_ == "aniso" ? "an anisotropy in [0, 1]"
                            : "a rotation in [0, 1] (turns)");
      if (origin && key_ == "Pcr") origin->hasPcr = true;
    } else if (key_ == "Pc") {
      // Blender 4's importer reads a coat of weight Pc / 4 (obj_import_mtl.cc: its Principled BSDF's clearcoat had
      // an implicit factor 0.25 before Blender 4), so a full coat is Pc 4.
      One(0.0f, 4.0f, "a clearcoat weight in [0, 4] (Blender reads a coat of weight Pc / 4)");
    } else {
      return false;
    }
    return true;
  }

  float Number(std::string_view token) {
    float v = 0.0f;
    const NumberKind kind = ParseNumber(token, &v);
    if (kind == NumberKind::kNonFinite) Bad(key_ + " " + Quote(token) + " is not finite");
    if (kind == NumberKind::kNotNumber)
      Bad(key_ + ": " + Quote(token) + " is not a number" +
          (token.find(',') != std::string_view::npos ? " (the decimal separator is '.', not ',')" : ""));
    return v;
  }
  // The statement's one value, within [lo, hi].
  float One(float lo, float hi, const char* what) {
    if (values_.size() != 1)
      Bad(key_ + " takes one number (" + what + "), not " + std::to_string(values_.size()) + Trailing(1));
    const float v = Number(values_[0]);
    if (!(v >= lo && v <= hi)) Bad(key_ + " " + Quote(values_[0]) + " is out of range: expected " + what);
    return v;
  }
  // "Kd r [g b]", "Kd xyz x [y z]" (CIE XYZ) or "Kd spectral file.rfl [factor]": g and b (y and z) default to r (x).
  ColourStatement Colour() {
    ColourStatement c;
    if (!values_.empty() && values_[0] == "spectral") {
      if (values_.size() < 2 || values_.size() > 3)
        Bad(key_ + " spectral takes a file name and an optional factor" + Trailing(3));
      if (values_.size() == 3) Number(values_[2]);
      if (warned_.insert("spectral").second)
        Warn(scene_, path_, line_,
             key_ +
                 " spectral: spectral curves (.rfl) are not supported; the statement reads as black (reported "
                 "once)");
      return c;
    }
    const bool xyz = !values_.empty() && values_[0] == "xyz";
    const size_t first = xyz ? 1 : 0, n = values_.size() - first;
    if (n != 1 && n != 3)
      Bad(key_ + (xyz ? " xyz takes x [y z]" : " takes r [g b]") + ": one or three numbers, not " + std::to_string(n) +
          (n > 3 ? Trailing(first + 3) : ""));
    float v[3];
    for (size_t i = 0; i < 3; ++i) v[i] = Number(values_[first + (n == 1 ? 0 : i)]);
    if (xyz) {
      // XYZ (D65) to linear sRGB (IEC 61966-2-1); an out-of-gamut colour's negative channels become 0.
      c.form = ColourStatement::kXyz;
      c.rgb = Vec3(std::max(3.2406f * v[0] - 1.5372f * v[1] - 0.4986f * v[2], 0.0f),
                   std::max(-0.9689f * v[0] + 1.8758f * v[1] + 0.0415f * v[2], 0.0f),
                   std::max(0.0557f * v[0] - 0.2040f * v[1] + 1.0570f * v[2], 0.0f));
    } else if (n == 1) {
      c.form = ColourStatement::kGrey;
    }
    for (size_t i = first; i < values_.size(); ++i)
      if (Number(values_[i]) < 0.0f) Bad(key_ + " " + Quote(values_[i]) + " is negative: a colour's channels are >= 0");
    return c;
  }
  // ": 'junk' after the numbers" when there are more than `expected` values and the first extra is no number.
  std::string Trailing(size_t expected) const {
    if (values_.size() <= expected) return "";
    float v;
    const std::string_view extra = values_[expected];
    return ParseNumber(extra, &v) == NumberKind::kNotNumber ? " (" + Quote(extra) + " follows the numbers)" : "";
  }
  Scene& scene_;
  const std::string& path_;
  std::set<std::string>& warned_;
  size_t line_ = 0;
  std::string key_;
  std::vector<std::string_view> values_;
  bool used_ = true;
};

// Statements of the format (and of tinyobjloader's and Blender's extensions) that are read, or known and not used;
// anything else is warned about once per keyword.
bool IsKnownStatement(std::string_view key) {
  return key == "newmtl" || key == "Km" || IsTextureKey(key);  // Km: an old bump multiplier, not used
}

}  // namespace

void ApplyColourStatements(const MtlOrigin& origin, tinyobj::material_t* m) {
  for (const auto& [key, colour] : origin.colours) {
    float* rgb = key == "Ka"   ? m->ambient
                 : key == "Kd" ? m->diffuse
                 : key == "Ks" ? m->specular
                 : key == "Ke" ? m->emission
                               : m->transmittance;
    if (colour.form == ColourStatement::kGrey) rgb[1] = rgb[2] = rgb[0];  // tinyobjloader's own r, unchanged
    if (colour.form == ColourStatement::kXyz) rgb[0] = colour.rgb.x, rgb[1] = colour.rgb.y, rgb[2] = colour.rgb.z;
  }
  if (origin.haloOpacity >= 0.0f) m->dissolve = origin.haloOpacity;
}

std::vector<MtlOrigin> ScanMtl(const std::string& path, const std::string& text, Scene& scene,
                               std::set<std::string>& warned) {
  std::vector<MtlOrigin> origins;
  ContentLines lines(path, text, "MTL");
  NumericStatements numeric(scene, path, warned);
  std::string_view line;
  std::vector<std::string_view> tokens;
  while (lines.Next(&line, &tokens)) {
    size_t lineNo = lines.Number();
    std::string_view key = tokens[0];
    MtlOrigin* current = origins.empty() ? nullptr : &origins.back();
    if (key == "newmtl") {
      // tinyobjloader's name: everything after "newmtl" and one separator, trailing blanks trimmed.
      std::string_view rest = line.substr(line.find("newmtl") + 6);
      size_t last = rest.find_last_not_of(" \t");
      if (last == std::string_view::npos) continue;  // no name: tinyobjloader ignores the line too
      MtlOrigin origin;
      origin.path = path;
      origin.name = std::string(rest.substr(1, last));
      origin.line = lineNo;
      origin.scanned = true;
      origins.push_back(origin);
      continue;
    }
    if (current) {
      for (std::string_view t : tokens) current->body.append(t).push_back(' ');
      current->body.push_back('\n');
    }
    if (IsTextureKey(key)) {
      TextureStatement statement;
      TextureStatementParser parser(scene, path, lineNo, warned);
      if (tokens.size() < 2) continue;  // "map_Kd" alone: tinyobjloader ignores it too
      if (parser.Parse(line, tokens, &statement) && current) current->maps[std::string(key)] = statement;
      continue;
    }
    if (numeric.Check(lineNo, tokens, current) || IsKnownStatement(key)) continue;
    if (warned.insert("statement:" + std::string(key)).second)
      Warn(scene, path, lineNo, "unknown MTL statement " + Quote(key) + "; ignored (reported once)");
  }
  return origins;
}

}  // namespace tracer::loader

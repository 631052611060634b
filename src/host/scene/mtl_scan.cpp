// @file mtl_scan.cpp: the MTL's checks, line by line, and its texture statements with their options.
#include "mtl_scan.h"

#include <algorithm>
#include <cctype>
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

}  // namespace

std::vector<MtlOrigin> ScanMtl(const std::string& path, const std::string& text, Scene& scene,
                               std::set<std::string>& warned) {
  static const std::set<std::string_view> kNumericKeys = {
      "Ka", "Kd", "Ks", "Ke", "Kt", "Tf", "Ni", "Ns", "d", "Tr", "Pr", "Pm", "illum",
  };
  std::vector<MtlOrigin> origins;
  ContentLines lines(path, text, "MTL");
  std::string_view line;
  std::vector<std::string_view> tokens;
  while (lines.Next(&line, &tokens)) {
    size_t lineNo = lines.Number();
    std::string_view key = tokens[0];
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
    if (IsTextureKey(key)) {
      TextureStatement statement;
      TextureStatementParser parser(scene, path, lineNo, warned);
      if (tokens.size() < 2) continue;  // "map_Kd" alone: tinyobjloader ignores it too
      if (parser.Parse(line, tokens, &statement) && !origins.empty()) origins.back().maps[std::string(key)] = statement;
      continue;
    }
    if (!kNumericKeys.count(key)) continue;
    if (!origins.empty() && (key == "Tf" || key == "Kt")) origins.back().hasTf = true;
    if (!origins.empty() && key == "d") origins.back().hasD = true;
    if (!origins.empty() && key == "Ns") origins.back().hasNs = true;
    if (!origins.empty() && key == "Ni") origins.back().hasNi = true;
    // Words such as "spectral", "xyz" or "-halo" are legal here; numbers must be finite.
    for (size_t t = 1; t < tokens.size() && tokens[t][0] != '#'; ++t) {
      float value;
      if (ParseNumber(tokens[t], &value) == NumberKind::kNonFinite)
        Fail(path, lineNo, std::string(key) + " " + Quote(tokens[t]) + " is not finite");
    }
  }
  return origins;
}

}  // namespace tracer::loader

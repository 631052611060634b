// @file obj_scan.cpp: the OBJ's checks, line by line in pieces on every thread, and our parse of its geometry.
#include "obj_scan.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <string_view>

#include "scene_text.h"
#include "tracer/host/huge_pages.h"

namespace tracer::loader {
namespace {

// ObjPolygons::portals' state at a piece's start until ScanObj knows the piece before it.
constexpr uint8_t kPortalInherited = 2;

// Reads a whole token of the form [+-]? (D+ [. D*] | . D+) [(e|E) [+-]? D+] with the arithmetic of tinyobjloader
// 2.0.0rc10's number parser, so that our parse gives the same floats, bit for bit, as its parse of the same file:
// the digits are summed in double (each fractional digit times 10^-k, from a table for k < 8), and an exponent
// e is applied as ldexp(m * 5^e, e); the double is then rounded to float. That is not correctly rounded (a value
// may differ from strtod's by an ulp), but it is what every scene loaded so far was made of. False when the
// token is not of that form (ParseNumber then tells why).
bool ReadObjNumber(std::string_view s, float* value) {
  static constexpr double kTenths[] = {1.0, 0.1, 0.01, 0.001, 0.0001, 0.00001, 0.000001, 0.0000001};
  auto digit = [&](size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; };
  size_t i = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) ++i;
  double mantissa = 0.0;
  size_t digits = 0;
  for (; digit(i); ++i, ++digits) {
    mantissa *= 10;
    mantissa += static_cast<int>(s[i] - '0');
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    for (int k = 1; digit(i); ++i, ++k, ++digits)
      mantissa += static_cast<int>(s[i] - '0') * (k < 8 ? kTenths[k] : std::pow(10.0, -k));
  }
  if (digits == 0) return false;
  int exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    const bool negativeExponent = i < s.size() && s[i] == '-';
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exponentDigits = 0;
    for (; digit(i); ++i)
      if (++exponentDigits > 9)
        return false;  // HasHugeExponent refuses such lines first
      else
        exponent = exponent * 10 + (s[i] - '0');
    if (exponentDigits == 0) return false;
    if (negativeExponent) exponent = -exponent;
  }
  if (i != s.size()) return false;
  const double magnitude = exponent ? std::ldexp(mantissa * std::pow(5.0, exponent), exponent) : mantissa;
  *value = static_cast<float>((negative ? -1 : 1) * magnitude);
  return true;
}

// A number of a v, vt or vn line: the value tinyobjloader would read, or the error naming the token.
float ObjNumberOrFail(const std::string& path, size_t lineNo, std::string_view token) {
  float value = 0.0f;
  if (ReadObjNumber(token, &value) && std::isfinite(value)) return value;
  if (ParseNumber(token, &value) == NumberKind::kNotNumber) Fail(path, lineNo, Quote(token) + " is not a number");
  Fail(path, lineNo, Quote(token) + " is not finite (nan, inf or beyond float range)");
}

// Splits like tinyobjloader's mtllib parsing: separated by spaces, "\ " escapes a space (and '\' is dropped
// before any other character, and at the end). Returns (tinyobjloader's name, the name as written) pairs: the
// written one keeps a Windows path's backslashes ("mtllib models\room.mtl"). The last name is returned even when
// empty ("mtllib " or a trailing blank), as tinyobjloader then asks for a file named "" too.
std::vector<std::pair<std::string, std::string>> SplitMtllibNames(std::string_view s) {
  std::vector<std::pair<std::string, std::string>> names;
  std::string current, written;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      written += s[i];
      if (i + 1 < s.size()) written += s[i + 1], current += s[++i];
    } else if (s[i] == ' ') {
      if (!current.empty()) names.emplace_back(current, written);
      current.clear();
      written.clear();
    } else {
      current += s[i];
      written += s[i];
    }
  }
  names.emplace_back(current, written);
  return names;
}

// Resolves one face index (1-based, or negative = relative to the count so far, per the OBJ spec) into *resolved
// (0-based). Returns the reason it is bad, or an empty string. Parses into int64 with a cap, so that no
// value (-2147483648, 99999999999999999999) can overflow.
std::string CheckIndex(std::string_view s, int64_t count, const char* what, int* resolvedIndex) {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  if (i == s.size()) return Quote(s) + " is not an index";
  int64_t value = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return Quote(s) + " is not an index";
    value = std::min<int64_t>(value * 10 + (s[i] - '0'), int64_t(1) << 40);
  }
  if (value == 0) return "index 0 is not allowed (OBJ indices start at 1)";
  int64_t resolved = negative ? count - value : value - 1;
  if (resolved < 0 || resolved >= count)
    return "index " + std::string(s) + " is out of range: " + std::to_string(count) + " " + what + " defined so far";
  if (resolved > INT_MAX) return "index " + std::string(s) + " is beyond the " + std::to_string(INT_MAX) + " supported";
  *resolvedIndex = static_cast<int>(resolved);
  return "";
}

// A usemtl statement's first word: tinyobjloader takes every line that starts with "usemtl" for one.
bool IsUsemtl(std::string_view key) { return key.substr(0, 6) == "usemtl"; }

// Lines and vertex records (v, vt, vn) of a piece of an OBJ, counted as ScanObjPiece counts them.
struct ObjCounts {
  size_t lines = 0;
  int64_t v = 0, vt = 0, vn = 0, usemtl = 0;
};

ObjCounts CountObjPiece(std::string_view text) {
  ObjCounts counts;
  LineReader lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    size_t i = line.find_first_not_of(" \t");  // the first token, as Tokenize finds it
    if (i == std::string_view::npos) continue;
    const std::string_view key = line.substr(i, line.find_first_of(" \t", i) - i);
    if (key == "v") counts.v++;
    if (key == "vt") counts.vt++;
    if (key == "vn") counts.vn++;
    if (IsUsemtl(key)) counts.usemtl++;
  }
  counts.lines = lines.Number();
  return counts;
}

}  // namespace

bool IsPortalName(std::string_view name) {
  const size_t start = name.find_first_not_of(" \t");
  if (start == std::string_view::npos || name.size() - start < 6) return false;
  static constexpr char kPortal[] = "portal";
  for (size_t i = 0; i < 6; ++i)
    if (std::tolower(static_cast<unsigned char>(name[start + i])) != kPortal[i]) return false;
  return true;
}

namespace {

// Checks one piece of an OBJ, which starts a line; `before` counts the lines and vertex records before it. With
// `parse`, also parses it: vertex records into parse->attrib at their offsets (which the counts give), faces into
// *faces.
ObjScan ScanObjPiece(const std::string& path, std::string_view text, const ObjCounts& before,
                     const LoadOptions& options, ObjParse* parse = nullptr, ObjPolygons* faces = nullptr) {
  ObjScan scan;
  int64_t numV = before.v, numVt = before.vt, numVn = before.vn, numUsemtl = before.usemtl;
  if (faces) faces->uses.emplace_back(0, numUsemtl - 1);
  if (faces) faces->portals.emplace_back(0, kPortalInherited);
  ContentLines lines(path, text, "OBJ", before.lines);
  std::string_view line;
  std::vector<std::string_view> tokens;
  while (lines.Next(&line, &tokens)) {
    size_t lineNo = lines.Number();
    std::string_view key = tokens[0];
    if (key == "v" || key == "vn" || key == "vt") {
      size_t needed = key == "vt" ? 1 : 3;
      size_t numbers = 0;
      float values[3] = {0.0f, 0.0f, 0.0f};  // what tinyobjloader keeps: x y z (v, vn) or u v (vt; v 0 if absent)
      for (size_t t = 1; t < tokens.size() && tokens[t][0] != '#'; ++t, ++numbers) {
        const float value = ObjNumberOrFail(path, lineNo, tokens[t]);
        if (numbers < 3) values[numbers] = value;
      }
      if (numbers < needed)
        Fail(path, lineNo, "'" + std::string(key) + "' needs " + std::to_string(needed) + " numbers");
      if (parse) {
        std::vector<tinyobj::real_t>& out = key == "v"    ? parse->attrib.vertices
                                            : key == "vt" ? parse->attrib.texcoords
                                                          : parse->attrib.normals;
        const size_t width = key == "vt" ? 2 : 3;
        const int64_t at = key == "v" ? numV : key == "vt" ? numVt : numVn;
        std::copy(values, values + width, out.begin() + static_cast<std::ptrdiff_t>(width * size_t(at)));
      }
      (key == "v" ? numV : key == "vt" ? numVt : numVn)++;
    } else if (key == "f" || key == "l" || key == "p") {
      // Faces, and the polylines and points we do not render but whose indices tinyobjloader refuses as we do.
      const char* what = key == "f" ? "face vertex " : key == "l" ? "line vertex " : "point ";
      size_t n = tokens.size() - 1;
      if (key == "f" && n < 3)
        Fail(path, lineNo, "a face needs at least 3 vertices, this one has " + std::to_string(n));
      // Checked before the indices so that a huge polygon fails at once (ear clipping is quadratic).
      if (key == "f" && n > size_t(options.maxFaceVertices))
        Fail(path, lineNo,
             "a face with " + std::to_string(n) + " vertices; at most " + std::to_string(options.maxFaceVertices) +
                 " are accepted; split it into smaller polygons");
      for (size_t t = 1; t < tokens.size(); ++t) {
        std::string_view parts[3];
        size_t numParts = 0;
        size_t start = 0;
        for (;;) {
          size_t slash = tokens[t].find('/', start);
          if (numParts == 3) Fail(path, lineNo, "malformed " + std::string(what) + Quote(tokens[t]));
          parts[numParts++] = tokens[t].substr(start, slash == std::string_view::npos ? slash : slash - start);
          if (slash == std::string_view::npos) break;
          start = slash + 1;
        }
        // "1/" and "1/2/" are malformed; "1//3" means no texture coordinate.
        if (parts[0].empty() || (numParts == 2 && parts[1].empty()) || (numParts == 3 && parts[2].empty()))
          Fail(path, lineNo, "malformed " + std::string(what) + Quote(tokens[t]));
        tinyobj::index_t corner{-1, -1, -1};  // vertex, normal, texcoord
        std::string why = CheckIndex(parts[0], numV, "vertices", &corner.vertex_index);
        if (why.empty() && numParts >= 2 && !parts[1].empty())
          why = CheckIndex(parts[1], numVt, "texture coordinates", &corner.texcoord_index);
        if (why.empty() && numParts == 3) why = CheckIndex(parts[2], numVn, "normals", &corner.normal_index);
        if (!why.empty()) Fail(path, lineNo, what + Quote(tokens[t]) + ": " + why);
        if (faces && key == "f") faces->corners.push_back(corner);
      }
      if (faces && key == "f") faces->sizes.push_back(static_cast<uint32_t>(n));
    } else if (key == "vw") {
      // Skin weights (tinyobjloader's extension, unused here): "vw VERTEX JOINT WEIGHT ...". tinyobjloader refuses
      // a joint that is not a number >= 0; so do we, with the line.
      for (size_t t = 2; t < tokens.size(); t += 2) {
        float joint = -1.0f;
        if (!ReadObjNumber(tokens[t], &joint) || !(joint >= 0.0f))
          Fail(path, lineNo, "vw: joint " + Quote(tokens[t]) + " is not a number >= 0");
      }
    } else if (key == "mtllib" && line.find("mtllib") + 6 < line.size()) {
      // (tinyobjloader takes "mtllib" for a statement only when a blank follows it)
      size_t at = line.find("mtllib") + 7;  // tinyobjloader skips "mtllib" and one separator
      std::vector<std::string> tried;
      for (const auto& [name, written] : SplitMtllibNames(line.substr(at))) {
        scan.mtllibLine.emplace(name, lineNo);
        scan.mtllibWritten.emplace(name, written);
        tried.push_back(name);
      }
      scan.mtllib.emplace_back(lineNo, std::move(tried));
    } else if ((key == "o" || key == "g") && faces && line.find_first_not_of(" \t") + 1 < line.size()) {
      // tinyobjloader starts a shape at each, named by it, where a blank follows the key ("g" alone is no statement
      // to it, "g " one without a name): the shape's faces are a portal's by that name.
      faces->portals.emplace_back(faces->sizes.size(), tokens.size() > 1 && IsPortalName(tokens[1]) ? 1 : 0);
    } else if (IsUsemtl(key)) {
      // tinyobjloader's name: the first word after "usemtl", which need not be followed by a blank ("usemtla").
      const std::string_view name = key.size() > 6 ? key.substr(6) : tokens.size() > 1 ? tokens[1] : "";
      scan.usemtl.emplace_back(lineNo, std::string(name));
      if (faces) faces->uses.emplace_back(faces->sizes.size(), numUsemtl);
      ++numUsemtl;
    }
  }
  return scan;
}

}  // namespace

ObjScan ScanObj(const std::string& path, const std::string& text, const LoadOptions& options, ThreadPool& pool,
                ObjParse* parse) {
  const size_t pieces = pool.PiecesFor(text.size(), size_t(1) << 12);
  std::vector<size_t> cut(pieces + 1, text.size());
  cut[0] = 0;
  for (size_t i = 1; i < pieces; ++i) {
    const size_t newline = text.find('\n', std::max(cut[i - 1], text.size() / pieces * i));
    cut[i] = newline == std::string::npos ? text.size() : newline + 1;  // after '\n': "\r\n" stays whole
  }
  auto piece = [&](size_t i) { return std::string_view(text).substr(cut[i], cut[i + 1] - cut[i]); };
  std::vector<ObjCounts> before(pieces + 1);  // before[pieces]: the whole file's counts (when counted)
  if (pieces > 1 || parse) {
    std::vector<ObjCounts> counts(pieces);
    pool.ParallelForEach(pieces, [&](size_t i) { counts[i] = CountObjPiece(piece(i)); });
    for (size_t i = 1; i <= pieces; ++i) {
      before[i] = before[i - 1];
      before[i].lines += counts[i - 1].lines;
      before[i].v += counts[i - 1].v;
      before[i].vt += counts[i - 1].vt;
      before[i].vn += counts[i - 1].vn;
      before[i].usemtl += counts[i - 1].usemtl;
    }
  }
  if (parse) {
    ResizeOnHugePages(parse->attrib.vertices, 3 * size_t(before[pieces].v));
    ResizeOnHugePages(parse->attrib.texcoords, 2 * size_t(before[pieces].vt));
    ResizeOnHugePages(parse->attrib.normals, 3 * size_t(before[pieces].vn));
    parse->pieces.assign(pieces, ObjPolygons());
  }
  std::vector<ObjScan> scans(pieces);
  pool.ParallelForEach(pieces, [&](size_t i) {
    scans[i] = ScanObjPiece(path, piece(i), before[i], options, parse, parse ? &parse->pieces[i] : nullptr);
  });
  if (parse) {  // each piece begins with the portal state in which the one before it ended
    uint8_t state = 0;
    for (ObjPolygons& p : parse->pieces) {
      if (p.portals.front().second == kPortalInherited) p.portals.front().second = state;
      state = p.portals.back().second;
    }
  }
  ObjScan scan = std::move(scans[0]);
  for (size_t i = 1; i < pieces; ++i) {
    scan.mtllibLine.insert(scans[i].mtllibLine.begin(), scans[i].mtllibLine.end());  // the first naming stays
    scan.mtllibWritten.insert(scans[i].mtllibWritten.begin(), scans[i].mtllibWritten.end());
    scan.usemtl.insert(scan.usemtl.end(), scans[i].usemtl.begin(), scans[i].usemtl.end());
    scan.mtllib.insert(scan.mtllib.end(), scans[i].mtllib.begin(), scans[i].mtllib.end());
  }
  return scan;
}

}  // namespace tracer::loader

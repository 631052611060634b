// @file scene_loader.cpp: OBJ/MTL/texture/camera loading: our checks and parse of the OBJ, tinyobjloader for the MTL.
//
// tinyobjloader 2.0.0rc10 reports no line numbers, turns nan/inf into 0 and passes out-of-range
// negative indices through (CVE-2020-28589). So every file is first read whole (regular files only,
// size-capped) and checked line by line here, in pieces cut at line ends, one thread per piece; only text
// that passed goes to tinyobjloader, and the indices it returns are checked once more before they are used.
// The OBJ's geometry is parsed during those checks (its numbers with tinyobjloader's arithmetic, its polygons
// triangulated as tinyobjloader triangulates them), since tinyobjloader's own parse is serial: 4-7 s of a
// 10M-triangle scene's load on the 16-core GPU machine. LoadOptions::tinyobjParse keeps the library's parse as the
// naive twin; both give the same Scene, byte for byte (tests/loader_test.cpp, the fuzzer).
#include "tracer/host/scene_loader.h"

#include <fcntl.h>
#include <stb/stb_image.h>
#include <sys/stat.h>
#include <tiny_obj_loader.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <istream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <streambuf>
#include <string_view>
#include <tuple>

#include "tracer/host/huge_pages.h"
#include "tracer/host/thread_pool.h"
#include "tracer/host/timing.h"

namespace tracer {
namespace {

constexpr int kMaxTextureSide = 16384;  // larger textures are refused (memory, not quality)
constexpr float kLargeEmission = 1e6f;  // Ke above this is legal but overflows float sums fast
constexpr size_t kMaxCameraFileBytes = size_t(1) << 20;

std::string Where(const std::string& path, size_t line) { return line ? path + ":" + std::to_string(line) : path; }

[[noreturn]] void Fail(const std::string& path, size_t line, const std::string& message) {
  throw SceneError(Where(path, line) + ": " + message);
}

// Collected, not printed: the caller prints them (the tracer deduplicates them and obeys --quiet).
void Warn(Scene& scene, const std::string& path, size_t line, const std::string& message) {
  scene.warnings.push_back(Where(path, line) + ": " + message);
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string FormatVec(Vec3 v) {
  std::ostringstream ss;
  ss << "(" << v.x << ", " << v.y << ", " << v.z << ")";
  return ss.str();
}

// Reads a whole regular file into *out. Returns an empty string on success, else the reason.
// O_NONBLOCK keeps open() from waiting for a writer when the path is a FIFO; fstat then refuses it.
std::string ReadRegularFile(const std::string& path, size_t maxBytes, std::string* out) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::string("cannot open: ") + std::strerror(errno);
  struct stat st;
  std::string why;
  if (fstat(fd, &st) != 0) {
    why = std::string("cannot stat: ") + std::strerror(errno);
  } else if (S_ISDIR(st.st_mode)) {
    why = "is a directory, not a file";
  } else if (!S_ISREG(st.st_mode)) {
    why = "is not a regular file (device, FIFO or socket)";
  } else if (size_t(st.st_size) > maxBytes) {
    why = "is " + std::to_string(st.st_size) + " bytes; the limit is " + std::to_string(maxBytes);
  } else {
    ResizeOnHugePages(*out, size_t(st.st_size));
    size_t got = 0;
    while (got < out->size()) {
      ssize_t n = read(fd, &(*out)[got], out->size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        why = std::string("read failed: ") + std::strerror(errno);
        break;
      }
      if (n == 0) break;  // the file shrank while we read it
      got += size_t(n);
    }
    out->resize(got);
  }
  close(fd);
  return why;
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string RealPath(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (!resolved) return "";
  std::string result(resolved);
  std::free(resolved);
  return result;
}

// Where files named by an OBJ or MTL are looked for: the scene's folder, then the --texture-path folders.
struct AssetFolders {
  std::string scene;               // real path of the OBJ's folder
  std::vector<std::string> extra;  // real paths of LoadOptions::searchPaths
};

bool IsInside(const std::string& real, const std::string& folder) {
  const std::string prefix = folder == "/" ? "/" : folder + "/";
  return real.compare(0, prefix.size(), prefix) == 0;
}

std::string LastComponent(const std::string& name) {
  size_t slash = name.find_last_of('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

// The names as written, then each with '\' read as '/': files written on Windows say "textures\wall.png" or
// ".\skin.jpg". On Linux '\' is a legal file-name character, so the name as written is tried first.
std::vector<std::string> NameVariants(const std::vector<std::string>& written) {
  std::vector<std::string> names;
  auto add = [&names](const std::string& n) {
    if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const std::string& w : written) add(w);
  for (std::string w : written) {
    std::replace(w.begin(), w.end(), '\\', '/');
    add(w);
  }
  return names;
}

// Resolves a file named by an OBJ or MTL (mtllib, map_Kd) and reads it: each name variant in the scene's folder,
// then in each --texture-path folder (the name, then its last component). Without allowOutsidePaths, the real
// path (symlinks followed) must lie inside the folder it was found through.
std::string ReadSceneAsset(const AssetFolders& folders, const std::vector<std::string>& written,
                           const LoadOptions& options, std::string* resolved, std::string* contents) {
  const std::vector<std::string> names = NameVariants(written);
  if (names.empty()) return "empty file name";
  std::string refusal, missing;
  auto found = [&](const std::string& folder, const std::string& candidate) {
    std::string real = RealPath(candidate);
    if (real.empty()) {
      if (missing.empty()) missing = std::strerror(errno);
      return false;
    }
    if (!options.allowOutsidePaths && !IsInside(real, folder)) {
      if (refusal.empty())
        refusal = "resolves to " + real + ", outside " +
                  (folder == folders.scene ? "the scene's folder " : "the --texture-path folder ") + folder +
                  " (--allow-outside-paths permits it)";
      return false;
    }
    *resolved = real;
    return true;
  };
  bool ok = false;
  for (size_t i = 0; i < names.size() && !ok; ++i)
    ok = found(folders.scene, names[i][0] == '/' ? names[i] : folders.scene + "/" + names[i]);
  for (size_t d = 0; d < folders.extra.size() && !ok; ++d)
    for (size_t i = 0; i < names.size() && !ok; ++i)
      ok = (names[i][0] != '/' && found(folders.extra[d], folders.extra[d] + "/" + names[i])) ||
           found(folders.extra[d], folders.extra[d] + "/" + LastComponent(names[i]));
  if (!ok && !refusal.empty()) return refusal;
  if (!ok)
    return "not found (" + missing +
           (folders.extra.empty() ? "; --texture-path DIR adds a folder to search)"
                                  : "; not in any --texture-path folder either)");
  return ReadRegularFile(*resolved, options.maxFileBytes, contents);
}

// A read-only istream over text we already hold, so that tinyobjloader does not need a second copy.
class MemoryBuf : public std::streambuf {
 public:
  explicit MemoryBuf(const std::string& text) {
    char* p = const_cast<char*>(text.data());  // streambuf wants char*; get-area reads never write
    setg(p, p, p + text.size());
  }
};

// Splits text into lines exactly as tinyobjloader's safeGetline does ("\n", "\r\n" and a lone "\r"
// each end a line), so that our line numbers and vertex counts agree with what it parses.
class LineReader {
 public:
  // firstLine: the lines before text, when it is a piece of a file (numbers then count on from there).
  explicit LineReader(std::string_view text, size_t firstLine = 0) : text_(text), number_(firstLine) {}
  bool Next(std::string_view* line) {
    if (pos_ >= text_.size()) return false;
    // Two memchr scans instead of find_first_of's test of every byte against both; the next '\r' is looked for
    // again only once it lies behind (most files have none, and then it is looked for once).
    if (!crFound_ || nextCr_ < pos_) nextCr_ = Find('\r'), crFound_ = true;
    const size_t end = std::min(Find('\n'), nextCr_);
    *line = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    if (end < text_.size() && text_[end] == '\r' && pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
    ++number_;
    return true;
  }
  size_t Number() const { return number_; }

 private:
  size_t Find(char c) const {  // the next c at or after pos_, else the end of the text
    const void* at = std::memchr(text_.data() + pos_, c, text_.size() - pos_);
    return at ? static_cast<size_t>(static_cast<const char*>(at) - text_.data()) : text_.size();
  }
  std::string_view text_;
  size_t pos_ = 0, number_ = 0, nextCr_ = 0;
  bool crFound_ = false;
};

void Tokenize(std::string_view line, std::vector<std::string_view>* tokens);
bool HasHugeExponent(std::string_view line);

// The lines of an OBJ or MTL file that carry content, tokenized, after the checks both scans need before
// tinyobjloader may see the text: no NUL byte, no exponent beyond int range. Blank and comment lines are
// skipped; Number() is the current line's number.
class ContentLines {
 public:
  ContentLines(const std::string& path, std::string_view text, const char* kind, size_t firstLine = 0)
      : path_(path), kind_(kind), lines_(text, firstLine) {}
  bool Next(std::string_view* line, std::vector<std::string_view>* tokens) {
    while (lines_.Next(line)) {
      if (line->find('\0') != std::string_view::npos)
        Fail(path_, Number(), std::string("contains a NUL byte; this is a binary file, not an ") + kind_);
      Tokenize(*line, tokens);
      if (tokens->empty() || (*tokens)[0][0] == '#') continue;
      if (HasHugeExponent(*line)) Fail(path_, Number(), "a number's exponent is out of range");
      return true;
    }
    return false;
  }
  size_t Number() const { return lines_.Number(); }

 private:
  const std::string& path_;
  const char* kind_;
  LineReader lines_;
};

// Space/tab separated tokens (tinyobjloader's separators).
void Tokenize(std::string_view line, std::vector<std::string_view>* tokens) {
  tokens->clear();
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) tokens->push_back(line.substr(start, i - start));
  }
}

enum class NumberKind { kNotNumber, kNonFinite, kFinite };

// Decimal numbers only (no hex: tinyobjloader would read "0x10" as 0). A value that is not finite as a
// float (nan, inf, 1e400, 1e39) is kNonFinite; underflow to zero is fine.
NumberKind ParseNumber(std::string_view token, float* value) {
  if (token.empty() || token.find_first_of("xX") != std::string_view::npos) return NumberKind::kNotNumber;
  std::string s(token);
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return NumberKind::kNotNumber;
  *value = float(d);
  return std::isfinite(*value) ? NumberKind::kFinite : NumberKind::kNonFinite;
}

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

// True when the line holds an exponent of five or more digits after a digit or '.' ("1e-21474836481",
// also inside a longer word). Such a value is beyond any float, and tinyobjloader's number parser, which
// parses every token of a line that starts like a number, accumulates the exponent in an int that overflows
// (undefined behaviour; three fuzzer findings). Both scans refuse such lines before the library sees them.
bool HasHugeExponent(std::string_view line) {
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] != 'e' && line[i] != 'E') continue;
    const char before = line[i - 1];
    if (!std::isdigit(static_cast<unsigned char>(before)) && before != '.') continue;
    size_t j = i + 1, digits = 0;
    if (j < line.size() && (line[j] == '+' || line[j] == '-')) ++j;
    while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j]))) ++j, ++digits;
    if (digits > 4) return true;
  }
  return false;
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

// ---- the OBJ pre-validation pass ---------------------------------------------------------------------

struct ObjScan {
  std::map<std::string, size_t> mtllibLine;            // MTL name as tinyobjloader passes it -> first line naming it
  std::map<std::string, std::string> mtllibWritten;    // the same name -> as written (backslashes kept)
  std::vector<std::pair<size_t, std::string>> usemtl;  // (line, material name)
  std::vector<std::pair<size_t, std::vector<std::string>>> mtllib;  // (line, the names tinyobjloader would try)
};

// The faces of one piece of an OBJ as our parse reads them, before triangulation.
struct ObjPolygons {
  std::vector<tinyobj::index_t> corners;  // every face's corners in file order, resolved to 0-based (-1: none)
  std::vector<uint32_t> sizes;            // corners per face
  // (first face, the usemtl statement in effect from it on: its ordinal in the file, -1 before the first one).
  // The first run starts at face 0 with the statement in effect where the piece begins.
  std::vector<std::pair<size_t, int64_t>> uses;
};

// Our parallel parse of an OBJ (the lines tinyobjloader reads for triangles): the vertex records, written by each
// piece at its offset, and each piece's faces.
struct ObjParse {
  tinyobj::attrib_t attrib;  // vertices, normals and texcoords, filled as tinyobjloader fills them
  std::vector<ObjPolygons> pieces;
};

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

// Checks one piece of an OBJ, which starts a line; `before` counts the lines and vertex records before it. With
// `parse`, also parses it: vertex records into parse->attrib at their offsets (which the counts give), faces into
// *faces.
ObjScan ScanObjPiece(const std::string& path, std::string_view text, const ObjCounts& before,
                     const LoadOptions& options, ObjParse* parse = nullptr, ObjPolygons* faces = nullptr) {
  ObjScan scan;
  int64_t numV = before.v, numVt = before.vt, numVn = before.vn, numUsemtl = before.usemtl;
  if (faces) faces->uses.emplace_back(0, numUsemtl - 1);
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

// Checks the OBJ in pieces cut at line ends, in parallel: the lines and vertex records of each piece are counted
// first, so that each piece knows its first line number and the vertices defined before it. The first error in file
// order is thrown, the same as a scan of the whole text (one piece, on a pool of one thread) throws. With `parse`,
// parses it too (ScanObjPiece).
ObjScan ScanObj(const std::string& path, const std::string& text, const LoadOptions& options, ThreadPool& pool,
                ObjParse* parse = nullptr) {
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
  ObjScan scan = std::move(scans[0]);
  for (size_t i = 1; i < pieces; ++i) {
    scan.mtllibLine.insert(scans[i].mtllibLine.begin(), scans[i].mtllibLine.end());  // the first naming stays
    scan.mtllibWritten.insert(scans[i].mtllibWritten.begin(), scans[i].mtllibWritten.end());
    scan.usemtl.insert(scan.usemtl.end(), scans[i].usemtl.begin(), scans[i].usemtl.end());
    scan.mtllib.insert(scan.mtllib.end(), scans[i].mtllib.begin(), scans[i].mtllib.end());
  }
  return scan;
}

// ---- the MTL pre-validation pass ---------------------------------------------------------------------

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

// Checks that every number on a numeric MTL line is finite, parses texture statements, and records one MtlOrigin
// per newmtl with a name, in the order tinyobjloader appends materials. `warned`: the texture options warned about.
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

// ---- loading ------------------------------------------------------------------------------------------

// Serves mtllib requests from tinyobjloader under our path rules, pre-validating each MTL.
class GuardedMaterialReader : public tinyobj::MaterialReader {
 public:
  GuardedMaterialReader(Scene& scene, const AssetFolders& folders, const ObjScan& scan, const LoadOptions& options)
      : scene_(scene), folders_(folders), scan_(scan), options_(options) {}

  bool operator()(const std::string& matId, std::vector<tinyobj::material_t>* materials,
                  std::map<std::string, int>* matMap, std::string* warn, std::string* err) override {
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

float SrgbToLinear(float c) { return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f); }

// How a texture's 8-bit values are read: colour (sRGB-decoded to linear RGB: map_Kd), data (value / 255: the
// scalar maps map_Ks and map_Ns, which Blender reads as non-colour data), or opacity (map_d: the image's alpha
// channel if it has one, else its first channel, / 255, in all four components).
enum class TexelEncoding { kSrgb, kData, kOpacity };

// Decodes an image file as linear values (alpha in w). Returns an empty string, or why it cannot be used.
// `channel` (-imfchan, data and opacity maps only; 0 = none) picks the one channel a scalar map reads, in every
// component: r, g or b; m (matte) the alpha channel, 1 without one; l the luminance of r, g, b (Rec. 709 weights, on
// the file's values); z, which 8-bit images do not have, the first channel.
std::string DecodeTexture(const std::string& bytes, TexelEncoding encoding, char channel, Texture* texture) {
  static const std::array<float, 256> kSrgbTable = [] {
    std::array<float, 256> table;
    for (int i = 0; i < 256; ++i) table[i] = SrgbToLinear(float(i) / 255.0f);
    return table;
  }();
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  int width, height, channels;
  if (!stbi_info_from_memory(data, int(bytes.size()), &width, &height, &channels))
    return std::string("cannot be decoded: ") + stbi_failure_reason();
  if (width > kMaxTextureSide || height > kMaxTextureSide)
    return "is " + std::to_string(width) + "x" + std::to_string(height) + "; the limit is " +
           std::to_string(kMaxTextureSide) + " per side";
  stbi_uc* pixels = stbi_load_from_memory(data, int(bytes.size()), &width, &height, &channels, 4);
  const bool hasAlpha = channels == 2 || channels == 4;  // grey + alpha, or RGBA, in the file
  if (!pixels) return std::string("cannot be decoded: ") + stbi_failure_reason();
  texture->width = width;
  texture->height = height;
  texture->texels.resize(size_t(width) * size_t(height));
  for (size_t i = 0; i < texture->texels.size(); ++i) {
    const stbi_uc* p = pixels + 4 * i;  // stb's row 0 is the top row, as we store it
    if (channel && encoding != TexelEncoding::kSrgb) {
      const float v = channel == 'g'   ? float(p[1]) / 255.0f
                      : channel == 'b' ? float(p[2]) / 255.0f
                      : channel == 'm' ? (hasAlpha ? float(p[3]) / 255.0f : 1.0f)
                      : channel == 'l'
                          ? (0.2126f * float(p[0]) + 0.7152f * float(p[1]) + 0.0722f * float(p[2])) / 255.0f
                          : float(p[0]) / 255.0f;
      texture->texels[i] = Float4{v, v, v, v};
      continue;
    }
    const float a = float(hasAlpha ? p[3] : p[0]) / 255.0f;
    texture->texels[i] =
        encoding == TexelEncoding::kOpacity ? Float4{a, a, a, a}
        : encoding == TexelEncoding::kSrgb
            ? Float4{kSrgbTable[p[0]], kSrgbTable[p[1]], kSrgbTable[p[2]], float(p[3]) / 255.0f}
            : Float4{float(p[0]) / 255.0f, float(p[1]) / 255.0f, float(p[2]) / 255.0f, float(p[3]) / 255.0f};
  }
  stbi_image_free(pixels);
  return "";
}

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

// The image a statement names, read and decoded at most once per encoding; -1 after a warning.
int LoadImage(Scene& scene, TextureCache& cache, const AssetFolders& folders, const std::string& key,
              const TextureStatement& statement, const MtlOrigin& origin, const LoadOptions& options,
              TexelEncoding encoding) {
  const std::string& name = statement.name;
  const char* const kPrefixes[] = {"srgb:", "data:", "opacity:"};
  // -imfchan picks one channel of a scalar map (data, opacity); a colour map keeps its three.
  const char channel = encoding == TexelEncoding::kSrgb ? 0 : statement.options.channel;
  if (statement.options.channel && !channel)
    Warn(scene, origin.path, statement.line,
         "material " + Quote(origin.name) + ": " + key +
             " -imfchan applies to scalar maps (bump, map_d, map_Ns, ...); ignored on a colour map");
  if (channel == 'z')
    Warn(scene, origin.path, statement.line,
         "material " + Quote(origin.name) + ": " + key +
             " -imfchan z: the image has no depth channel; its first channel is read");
  const std::string prefix = std::string(kPrefixes[static_cast<int>(encoding)]) +
                             (channel ? std::string("imfchan ") + channel + ":" : std::string()),
                    nameKey = prefix + name;
  if (auto known = cache.byName.find(nameKey); known != cache.byName.end()) return known->second;
  if (auto failed = cache.failedName.find(nameKey); failed != cache.failedName.end()) {
    failed->second.more++;
    return -1;
  }
  std::string resolved, bytes;
  LoadOptions textureOptions = options;
  textureOptions.maxFileBytes = std::min<size_t>(options.maxFileBytes, INT_MAX);  // stb takes an int length
  std::string why = ReadSceneAsset(folders, {name}, textureOptions, &resolved, &bytes);
  int index = -1;
  if (why.empty()) {
    if (auto known = cache.byPath.find(prefix + resolved); known != cache.byPath.end()) {
      index = known->second;  // the same file under another name ("a.png", ".\a.png")
    } else {
      Texture texture;
      texture.path = resolved;
      why = DecodeTexture(bytes, encoding, channel, &texture);
      if (why.empty()) {
        scene.textures.push_back(std::move(texture));
        index = int(scene.textures.size()) - 1;
        cache.byPath[prefix + resolved] = index;
      }
    }
  }
  if (index < 0) {
    cache.failedName[nameKey] = TextureCache::Failure{scene.warnings.size()};
    Warn(scene, origin.path, statement.line,
         "material " + Quote(origin.name) + ": " + key + " " + Quote(name) + " " + why + "; " +
             (key == "map_Kd" ? "using Kd without a texture" : "ignored"));
    return -1;
  }
  cache.byName[nameKey] = index;
  return index;
}

// The TextureMap of a statement (an image and its options): index into Scene::textureMaps, or -1 after a warning.
int LoadTexture(Scene& scene, TextureCache& cache, const AssetFolders& folders, const std::string& key,
                const TextureStatement& statement, const MtlOrigin& origin, const LoadOptions& options,
                TexelEncoding encoding = TexelEncoding::kSrgb) {
  // -colorspace: a colour map read as linear values, or a data map sRGB-decoded (with -imfchan, a channel is data).
  const char colorspace = statement.options.colorspace;
  if (colorspace == 'l' && encoding == TexelEncoding::kSrgb) encoding = TexelEncoding::kData;
  if (colorspace == 's' && encoding == TexelEncoding::kData && !statement.options.channel)
    encoding = TexelEncoding::kSrgb;
  if (colorspace && encoding == TexelEncoding::kOpacity)
    Warn(scene, origin.path, statement.line,
         "material " + Quote(origin.name) + ": " + key + " -colorspace: an opacity is read as data; ignored");
  const int image = LoadImage(scene, cache, folders, key, statement, origin, options, encoding);
  if (image < 0) return -1;
  const TextureOptions& o = statement.options;
  const std::array<float, 8> values = {o.scale[0], o.scale[1], o.offset[0],      o.offset[1],
                                       o.base,     o.gain,     o.bumpMultiplier, 0.0f};
  auto [it, isNew] = cache.maps.emplace(std::make_tuple(image, values, o.clamp, o.channel), 0);
  if (isNew) {
    it->second = int(scene.textureMaps.size());
    scene.textureMaps.push_back(TextureMap{image, o});
  }
  return it->second;
}

Vec3 ToVec3(const tinyobj::real_t* v) { return Vec3(v[0], v[1], v[2]); }

// Clamps each channel to [lo, hi]; warns once if anything changed.
Vec3 ClampColor(Scene& scene, const MtlOrigin& origin, const char* key, Vec3 c, float lo, float hi) {
  Vec3 clamped(Clamp(c.x, lo, hi), Clamp(c.y, lo, hi), Clamp(c.z, lo, hi));
  if (clamped.x != c.x || clamped.y != c.y || clamped.z != c.z)
    Warn(scene, origin.path, origin.line,
         "material " + Quote(origin.name) + ": " + key + " " + FormatVec(c) + " is out of range; clamped to " +
             FormatVec(clamped));
  return clamped;
}

HostMaterial ConvertMaterial(Scene& scene, const tinyobj::material_t& m, const MtlOrigin& origin) {
  // tinyobjloader turns some tokens that are no numbers to our scan (such as "-.e1302") into NaN or inf
  // (a fuzzer finding): every value we use must be finite.
  const std::pair<const char*, bool> finite[] = {
      {"Ke", IsFinite(ToVec3(m.emission))}, {"Kd", IsFinite(ToVec3(m.diffuse))},
      {"Ks", IsFinite(ToVec3(m.specular))}, {"Tf", IsFinite(ToVec3(m.transmittance))},
      {"d", std::isfinite(m.dissolve)},     {"Ni", std::isfinite(m.ior)},
      {"Ns", std::isfinite(m.shininess)}};
  for (const auto& f : finite)
    if (!f.second) Fail(origin.path, origin.line, "material " + Quote(origin.name) + ": " + f.first + " is not finite");
  Vec3 ke = ToVec3(m.emission);
  if (MaxComponent(ke) > kLargeEmission)
    Warn(scene, origin.path, origin.line,
         "material " + Quote(origin.name) + ": Ke " + FormatVec(ke) + " is very large; sums of it may overflow");
  HostMaterial out;
  out.name = m.name;
  out.ke = ClampColor(scene, origin, "Ke", ke, 0.0f, kInf);
  out.kd = ClampColor(scene, origin, "Kd", ToVec3(m.diffuse), 0.0f, 1.0f);
  out.ks = ClampColor(scene, origin, "Ks", ToVec3(m.specular), 0.0f, 1.0f);
  Vec3 tf = origin.hasTf ? ClampColor(scene, origin, "Tf", ToVec3(m.transmittance), 0.0f, 1.0f) : Vec3(1.0f);
  // d is opacity (dissolve), not transmission: traversal's cut-out test (core/scene_view.h) applies it.
  out.opacity = origin.hasD ? Clamp(m.dissolve, 0.0f, 1.0f) : 1.0f;
  float ni = origin.hasNi ? m.ior : 1.5f;  // Blender's IOR when the file names none
  if (ni <= 0.0f) {
    Warn(scene, origin.path, origin.line,
         "material " + Quote(origin.name) + ": Ni " + std::to_string(ni) +
             " is not a valid index of refraction; using 1.5");
    ni = 1.5f;
  }
  out.alpha = MtlAlpha(m.illum, origin.hasNs, m.shininess);
  const bool specularMap = !m.specular_texname.empty();
  out.cls = ClassifyMaterial(m.illum, out.kd, out.ks, out.alpha, tf);
  if (out.cls == kDielectric) {
    out.kd = tf;
    out.ior = ni;
    if (ni <= 1.0f) {
      Warn(scene, origin.path, origin.line,
           "material " + Quote(origin.name) + ": a dielectric with Ni " + std::to_string(ni) + "; using 1.5");
      out.ior = 1.5f;
    }
  } else if (out.cls == kGlossy && IsConductor(m.illum, out.kd, out.ks)) {
    // A conductor: f0 = Ks (Schlick's approximation of a metal's Fresnel), no diffuse base.
    out.kd = Vec3(0.0f);
    out.f90 = 1.0f;
    out.alpha = std::max(out.alpha, kMinGlossyAlpha);
  } else if (out.cls == kGlossy) {
    // A dielectric layer as Blender reads it: Ks's mean is the "Specular IOR Level" l (0.5 keeps Ni's
    // reflectance), so f0 = 2 l ((Ni - 1) / (Ni + 1))^2; f90 = min(1, 2 l) makes l = 0 reflect nothing.
    const float level = (out.ks.x + out.ks.y + out.ks.z) / 3.0f;
    const float f0Ni = Sqr((ni - 1.0f) / (ni + 1.0f));
    out.specularScale = 2.0f * f0Ni;
    out.ks = Vec3(std::min(out.specularScale * level, 1.0f));
    out.f90 = std::min(2.0f * level, 1.0f);
    out.alpha = std::max(out.alpha, kMinGlossyAlpha);
    if (f0Ni == 0.0f && !specularMap) out.cls = kDiffuse;  // Ni 1: no specular reflection (as in Blender)
  }
  return out;
}

// Normalizes in double (coordinates up to 1e30 would overflow float squares); false if zero or non-finite.
bool NormalizeChecked(double x, double y, double z, Vec3* out) {
  double len = std::sqrt(x * x + y * y + z * z);
  if (!(len > 0.0) || !std::isfinite(len)) return false;
  *out = Vec3(float(x / len), float(y / len), float(z / len));
  return IsFinite(*out);
}

std::string CameraPathFor(const std::string& objPath) {
  size_t slash = objPath.find_last_of('/');
  size_t dot = objPath.find_last_of('.');
  bool hasExtension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return (hasExtension ? objPath.substr(0, dot) : objPath) + ".camera";
}

}  // namespace

// Emission (ke) is a property that any class may have, not a class of its own. Neither d (opacity) nor Ni
// makes glass: Tf with a transparent illum does.
MaterialClass ClassifyMaterial(int illum, Vec3 kd, Vec3 ks, float alpha, Vec3 tf) {
  if ((illum == 4 || illum == 6 || illum == 7 || illum == 9) && MaxComponent(tf) > 0.0f) return kDielectric;
  if (!(MaxComponent(ks) > 0.0f)) return kDiffuse;
  if (IsConductor(illum, kd, ks)) return alpha < kMinGlossyAlpha ? kMirror : kGlossy;
  return kGlossy;
}

bool IsConductor(int illum, Vec3 kd, Vec3 ks) {
  const bool reflectionIllum = illum == 3 || illum == 5 || illum == 7 || illum == 8;
  return (reflectionIllum && MaxComponent(ks) >= 0.5f) || (MaxComponent(kd) == 0.0f && MaxComponent(ks) > 0.0f);
}

float MtlAlpha(int illum, bool hasNs, float ns) {
  // Blender's importer: roughness r = 1 - sqrt(clamp(Ns, 0, 1000) / 1000), and without Ns r = 0 where illum
  // turns highlights or reflection on (2 to 8 here, 2 in Blender, which reads 3 to 8 as rough metal), else 1.
  // Its Principled BSDF's GGX alpha is r^2.
  float r = hasNs ? 1.0f - std::sqrt(Clamp(ns, 0.0f, 1000.0f) / 1000.0f) : (illum >= 2 && illum <= 8 ? 0.0f : 1.0f);
  return r * r;
}

std::string Scene::Summary() const {
  size_t perClass[kNumMaterialClasses] = {};
  size_t emissive = 0, emitterTriangles = 0;
  for (const HostMaterial& m : materials) {
    perClass[m.cls]++;
    emissive += m.IsEmissive();
  }
  for (int32_t m : triMaterial) emitterTriangles += materials[size_t(m)].IsEmissive();
  std::ostringstream ss;
  ss << "scene: " << NumTriangles() << " triangles, " << materials.size() << " materials (" << perClass[kDiffuse]
     << " diffuse, " << perClass[kGlossy] << " glossy, " << perClass[kMirror] << " mirror, " << perClass[kDielectric]
     << " dielectric; " << emissive << " emissive), " << emitterTriangles << " emitter triangles";
  return ss.str();
}

// The camera file: one setting per line, '#' starts a comment, blank lines are ignored.
//   eye X Y Z        required: the camera position
//   look_at X Y Z    required: a point the camera looks at
//   up X Y Z         optional, default 0 1 0; must not be parallel to look_at - eye
//   fov DEGREES      optional, default 45: the vertical field of view, in (0, 180)
//   aperture R       optional, default 0 (a pinhole): the thin lens's radius, in scene units, >= 0
//   focus_distance D optional, default |look_at - eye|: the distance of the sharp plane along the view, > 0
CameraSpec LoadCameraFile(const std::string& path) {
  std::string text;
  std::string why = ReadRegularFile(path, kMaxCameraFileBytes, &text);
  if (!why.empty()) Fail(path, 0, why);
  CameraSpec camera;
  std::map<std::string, size_t> seen;  // keyword -> line
  LineReader lines(text);
  std::string_view line;
  std::vector<std::string_view> tokens;
  while (lines.Next(&line)) {
    size_t lineNo = lines.Number();
    Tokenize(line.substr(0, line.find('#')), &tokens);
    if (tokens.empty()) continue;
    std::string key(tokens[0]);
    const bool scalar = key == "fov" || key == "aperture" || key == "focus_distance";
    size_t count = scalar ? 1 : 3;
    if (key != "eye" && key != "look_at" && key != "up" && !scalar)
      Fail(path, lineNo,
           "unknown setting " + Quote(key) + " (expected eye, look_at, up, fov, aperture or focus_distance)");
    if (!seen.emplace(key, lineNo).second) Fail(path, lineNo, Quote(key) + " is given twice");
    if (tokens.size() - 1 != count)
      Fail(path, lineNo, Quote(key) + " needs " + std::to_string(count) + (count == 1 ? " number" : " numbers"));
    float values[3];
    for (size_t i = 0; i < count; ++i)
      if (ParseNumber(tokens[i + 1], &values[i]) != NumberKind::kFinite)
        Fail(path, lineNo, Quote(tokens[i + 1]) + " is not a finite number");
    Vec3 v(values[0], count == 3 ? values[1] : 0.0f, count == 3 ? values[2] : 0.0f);
    if (key == "eye") camera.eye = v;
    if (key == "look_at") camera.lookAt = v;
    if (key == "up") camera.up = v;
    if (key == "fov") camera.fovY = values[0];
    if (key == "aperture") camera.aperture = values[0];
    if (key == "focus_distance") camera.focusDistance = values[0];
  }
  if (!(camera.aperture >= 0.0f)) Fail(path, seen["aperture"], "aperture (the lens radius) must not be negative");
  if (seen.count("focus_distance") && !(camera.focusDistance > 0.0f))
    Fail(path, seen["focus_distance"], "focus_distance must be positive");
  if (!seen.count("eye")) Fail(path, 0, "'eye' is required");
  if (!seen.count("look_at")) Fail(path, 0, "'look_at' is required");
  if (!(camera.fovY > 0.0f && camera.fovY < 180.0f)) Fail(path, seen["fov"], "fov must be in (0, 180) degrees");
  Vec3 forward = camera.lookAt - camera.eye;
  if (IsBlack(forward)) Fail(path, seen["look_at"], "look_at equals eye");
  // NaN (a zero up) fails the comparison too.
  if (!(Length(Cross(Normalize(forward), Normalize(camera.up))) > 1e-6f))
    Fail(path, seen.count("up") ? seen["up"] : 0, "up is zero or parallel to the view direction");
  camera.valid = true;
  return camera;
}

namespace {

// A name defined twice (in one MTL or across several): tinyobjloader's usemtl finds the first definition.
// One warning per name, at its second definition.
void WarnDuplicateMaterials(Scene& scene, const std::vector<MtlOrigin>& origins) {
  std::map<std::string, std::vector<const MtlOrigin*>> byName;
  for (const MtlOrigin& origin : origins) byName[origin.name].push_back(&origin);
  for (const MtlOrigin& origin : origins) {
    const std::vector<const MtlOrigin*>& all = byName[origin.name];
    if (all.size() < 2 || all[1] != &origin) continue;
    const std::string times = all.size() > 2 ? " (" + std::to_string(all.size()) + " definitions in all)" : "";
    Warn(scene, origin.path, origin.line,
         "material " + Quote(origin.name) + " is defined again" + times + "; the first definition, at " +
             Where(all[0]->path, all[0]->line) + ", is used");
  }
}

// The statement of `key` in a material. For a material our scan could not pair with tinyobjloader's (origin not
// scanned), the name tinyobjloader read, without options.
std::optional<TextureStatement> FindTexture(const MtlOrigin& origin, const std::string& tinyobjName,
                                            const std::string& key) {
  if (!origin.scanned)
    return tinyobjName.empty() ? std::nullopt
                               : std::optional<TextureStatement>({tinyobjName, TextureOptions{}, origin.line});
  auto it = origin.maps.find(key);
  return it == origin.maps.end() ? std::nullopt : std::optional<TextureStatement>(it->second);
}

}  // namespace

std::array<double, 3> MeanTexel(const Texture& texture) {
  std::array<double, 3> sum = {0.0, 0.0, 0.0};
  for (const Float4& x : texture.texels) sum[0] += x.x, sum[1] += x.y, sum[2] += x.z;
  const double n = std::max<double>(1.0, static_cast<double>(texture.texels.size()));
  return {sum[0] / n, sum[1] / n, sum[2] / n};
}

namespace {

// The first of `keys` the material states (bump, map_Bump and map_bump name one map).
std::optional<TextureStatement> FindTextureOf(const MtlOrigin& origin, const std::string& tinyobjName,
                                              std::initializer_list<const char*> keys) {
  for (const char* key : keys)
    if (std::optional<TextureStatement> t = FindTexture(origin, tinyobjName, key)) return t;
  return std::nullopt;
}

// A tangent-space normal map stored as a bump map (Blender's exporter writes its normal maps as map_Bump): bluish
// on average, red and green near one half. A height map is grey (r = g = b).
bool LooksLikeNormalMap(const Texture& t) {
  const auto [r, g, b] = MeanTexel(t);
  return b > r + 0.2 && b > g + 0.2 && std::fabs(r - 0.5) < 0.15 && std::fabs(g - 0.5) < 0.15;
}

// Materials in file order (textures loaded once each), and undefined usemtl names reported at their line.
void AddMaterials(Scene& scene, const std::string& path, const AssetFolders& folders,
                  const std::vector<tinyobj::material_t>& objMaterials, const GuardedMaterialReader& reader,
                  const ObjScan& scan, const LoadOptions& options) {
  std::set<std::string> defined;
  TextureCache textureCache;
  for (size_t i = 0; i < objMaterials.size(); ++i) {
    const MtlOrigin& origin = reader.Origins().at(i);
    const tinyobj::material_t& om = objMaterials[i];
    HostMaterial m = ConvertMaterial(scene, om, origin);
    if (const std::optional<TextureStatement> kd = FindTexture(origin, om.diffuse_texname, "map_Kd"))
      m.texture = LoadTexture(scene, textureCache, folders, "map_Kd", *kd, origin, options);
    // map_Ks and map_Ns as data (Blender's non-colour), for the glossy class only.
    if (m.cls == kGlossy) {
      if (const std::optional<TextureStatement> ks = FindTexture(origin, om.specular_texname, "map_Ks"))
        m.specularTexture =
            LoadTexture(scene, textureCache, folders, "map_Ks", *ks, origin, options, TexelEncoding::kData);
      if (const std::optional<TextureStatement> ns = FindTexture(origin, om.specular_highlight_texname, "map_Ns"))
        m.roughnessTexture =
            LoadTexture(scene, textureCache, folders, "map_Ns", *ns, origin, options, TexelEncoding::kData);
    }
    // map_Ke as colour: the emission is Ke times the texel; a file that gives map_Ke without a Ke (black Ke)
    // means the texture itself, as Blender reads it.
    if (const std::optional<TextureStatement> ke = FindTexture(origin, om.emissive_texname, "map_Ke")) {
      m.emissionTexture = LoadTexture(scene, textureCache, folders, "map_Ke", *ke, origin, options);
      if (m.emissionTexture >= 0 && !m.IsEmissive()) m.ke = Vec3(1.0f);
    }
    // map_d as opacity, for every class (cut-outs: traversal's CutoutFilter, core/scene_view.h).
    if (const std::optional<TextureStatement> d = FindTexture(origin, om.alpha_texname, "map_d"))
      m.opacityTexture =
          LoadTexture(scene, textureCache, folders, "map_d", *d, origin, options, TexelEncoding::kOpacity);
    // bump/map_Bump as heights, norm/map_Kn as tangent-space normals, both as data (core/scene_view.h,
    // MappedNormal). With both, the normal map is used.
    if (const std::optional<TextureStatement> norm = FindTextureOf(origin, om.normal_texname, {"norm", "map_Kn"})) {
      m.bumpTexture = LoadTexture(scene, textureCache, folders, "norm", *norm, origin, options, TexelEncoding::kData);
      m.bumpIsNormalMap = m.bumpTexture >= 0;
    }
    if (m.bumpTexture < 0) {
      if (const std::optional<TextureStatement> bump =
              FindTextureOf(origin, om.bump_texname, {"bump", "map_Bump", "map_bump"})) {
        m.bumpTexture = LoadTexture(scene, textureCache, folders, "bump", *bump, origin, options, TexelEncoding::kData);
        const TextureMap* map = m.bumpTexture >= 0 ? &scene.textureMaps[static_cast<size_t>(m.bumpTexture)] : nullptr;
        if (map && LooksLikeNormalMap(scene.textures[static_cast<size_t>(map->texture)])) {
          m.bumpIsNormalMap = true;
          Warn(scene, origin.path, bump->line,
               "material " + Quote(origin.name) + ": bump map " + Quote(bump->name) +
                   " looks like a tangent-space normal map (bluish, red and green near 0.5); read as one (write it as "
                   "norm to say so)");
        }
      }
    }
    scene.materials.push_back(m);
    defined.insert(om.name);
  }
  textureCache.Finish(scene);
  WarnDuplicateMaterials(scene, reader.Origins());
  std::set<std::string> reported;
  for (const auto& [line, name] : scan.usemtl)
    if (!defined.count(name) && reported.insert(name).second)
      Warn(scene, path, line, "usemtl " + Quote(name) + " names an undefined material; using grey diffuse (0.5)");
}

// The corners and face normal of a triangle; false when it is not finite or has zero area (also once rounded to
// float: light sampling divides by it).
bool FaceGeometry(const tinyobj::attrib_t& attrib, const tinyobj::index_t* idx, Vec3 p[3], Vec3* ng) {
  bool finite = true;
  double dp[3][3];
  for (int k = 0; k < 3; ++k) {
    p[k] = ToVec3(&attrib.vertices[3 * size_t(idx[k].vertex_index)]);
    finite = finite && IsFinite(p[k]);
    for (int c = 0; c < 3; ++c) dp[k][c] = p[k][c];
  }
  // Face normal in double: float cross products overflow for coordinates near 1e30.
  double e1[3], e2[3];
  for (int c = 0; c < 3; ++c) e1[c] = dp[1][c] - dp[0][c], e2[c] = dp[2][c] - dp[0][c];
  double cx = e1[1] * e2[2] - e1[2] * e2[1], cy = e1[2] * e2[0] - e1[0] * e2[2], cz = e1[0] * e2[1] - e1[1] * e2[0];
  float area = float(0.5 * std::sqrt(cx * cx + cy * cy + cz * cz));
  return finite && area > 0.0f && NormalizeChecked(cx, cy, cz, ng);
}

// Triangles as AddTriangles reads them: 3 corners and a material (tinyobjloader's id, -1 none) per triangle.
struct TriangleBlock {
  const tinyobj::index_t* corners;
  const int* materials;
  size_t count;
  std::string name;  // tinyobjloader's shape name, for a message
};

// tinyobjloader's shapes as blocks, after checking that they are triangulated.
std::vector<TriangleBlock> ShapeBlocks(const std::string& path, const std::vector<tinyobj::shape_t>& shapes) {
  std::vector<TriangleBlock> blocks;
  for (const tinyobj::shape_t& shape : shapes) {
    const tinyobj::mesh_t& mesh = shape.mesh;
    if (mesh.indices.size() != 3 * mesh.num_face_vertices.size() ||
        mesh.material_ids.size() != mesh.num_face_vertices.size())
      Fail(path, 0, "internal: tinyobjloader returned a mesh that is not triangulated");
    blocks.push_back({mesh.indices.data(), mesh.material_ids.data(), mesh.num_face_vertices.size(), shape.name});
  }
  return blocks;
}

// The triangles of one piece of our parse.
struct ObjTriangles {
  std::vector<tinyobj::index_t> corners;
  std::vector<int> materials;
};

// Splits the polygons of more than four corners of one piece exactly as tinyobjloader does (its ear clipping, in the
// library, on the same float positions): their corners' positions are written out as one small OBJ (9 digits: its
// number parser reads them back to the same floats), one face per polygon over vertices of its own, and the
// library's triangles are mapped back to the corners. One LoadObj per piece (per polygon, it cost 20 us each).
class TinyobjEarClipper {
 public:
  TinyobjEarClipper(const std::vector<tinyobj::real_t>& vertices, const ObjPolygons& piece) {
    if (std::none_of(piece.sizes.begin(), piece.sizes.end(), [](uint32_t size) { return size > 4; })) return;
    std::string obj, faces;
    char line[128];
    const tinyobj::index_t* corner = piece.corners.data();
    int written = 0;
    for (const uint32_t size : piece.sizes) {
      if (size > 4) {
        faces += "f";
        for (uint32_t k = 0; k < size; ++k) {
          const tinyobj::real_t* p = &vertices[3 * size_t(corner[k].vertex_index)];
          obj += "v";
          for (int c = 0; c < 3; ++c) {
            // 9 significant digits: within 0.5e-8 of the float, relatively, and its neighbours lie 6e-8 away, far
            // beyond the 1e-16 that tinyobjloader's arithmetic may be off by (17 digits cost it a pow() each).
            line[0] = ' ';
            obj.append(line, std::to_chars(line + 1, line + sizeof line, p[c], std::chars_format::general, 9).ptr);
          }
          obj += "\n";
          faces += " " + std::to_string(++written);
        }
        faces += "\n";
      }
      corner += size;
    }
    if (written == 0) return;
    obj += faces;
    tinyobj::attrib_t attrib;
    std::vector<tinyobj::shape_t> shapes;
    std::string warn, err;
    MemoryBuf buf(obj);
    std::istream stream(&buf);
    if (tinyobj::LoadObj(&attrib, &shapes, nullptr, &warn, &err, &stream, nullptr, /*triangulate=*/true,
                         /*default_vcols_fallback=*/false))
      for (const tinyobj::shape_t& shape : shapes)
        triangles_.insert(triangles_.end(), shape.mesh.indices.begin(), shape.mesh.indices.end());
  }
  // Appends the triangles of the piece's next polygon of more than four corners (n of them, `polygon`).
  void Next(const tinyobj::index_t* polygon, size_t n, std::vector<tinyobj::index_t>* out) {
    const int first = firstVertex_;
    firstVertex_ += static_cast<int>(n);
    // The library's triangles come in face order; a polygon it could not split has none.
    while (cursor_ + 3 <= triangles_.size() && triangles_[cursor_].vertex_index >= first &&
           triangles_[cursor_].vertex_index < firstVertex_) {
      for (int k = 0; k < 3; ++k) out->push_back(polygon[triangles_[cursor_ + k].vertex_index - first]);
      cursor_ += 3;
    }
  }

 private:
  std::vector<tinyobj::index_t> triangles_;  // indices into the small OBJ's vertices
  size_t cursor_ = 0;
  int firstVertex_ = 0;  // the small OBJ's first vertex of the next polygon
};

// One piece's polygons as tinyobjloader triangulates them: a triangle as it is; a quad cut along its shorter diagonal
// (its comparison, in float: from corner 0 to 2 when strictly shorter than from 1 to 3, else from 1 to 3); larger
// polygons by TinyobjEarClipper. useMaterial: the material id of each usemtl statement.
ObjTriangles Triangulate(const std::vector<tinyobj::real_t>& v, ObjPolygons& piece,
                         const std::vector<int>& useMaterial) {
  ObjTriangles out;
  const bool allTriangles =
      std::all_of(piece.sizes.begin(), piece.sizes.end(), [](uint32_t size) { return size == 3; });
  if (allTriangles) {
    out.corners = std::move(piece.corners);
  } else {
    out.corners.reserve(piece.corners.size() * 3 / 2);
  }
  TinyobjEarClipper clipper(v, piece);
  out.materials.reserve(allTriangles ? piece.sizes.size() : out.corners.capacity() / 3);
  const tinyobj::index_t* corner = piece.corners.data();
  size_t run = 0;
  int material = -1;
  for (size_t face = 0; face < piece.sizes.size(); ++face) {
    for (; run < piece.uses.size() && piece.uses[run].first == face; ++run)
      material = piece.uses[run].second < 0 ? -1 : useMaterial[size_t(piece.uses[run].second)];
    const uint32_t size = piece.sizes[face];
    const size_t before = out.corners.size();
    if (allTriangles) {
      out.materials.push_back(material);
      continue;
    }
    if (size == 3) {
      out.corners.insert(out.corners.end(), corner, corner + 3);
    } else if (size == 4) {
      auto at = [&](int k, int c) { return v[3 * size_t(corner[k].vertex_index) + size_t(c)]; };
      tinyobj::real_t d02[3], d13[3];
      for (int c = 0; c < 3; ++c) d02[c] = at(2, c) - at(0, c), d13[c] = at(3, c) - at(1, c);
      const tinyobj::real_t sqr02 = d02[0] * d02[0] + d02[1] * d02[1] + d02[2] * d02[2];
      const tinyobj::real_t sqr13 = d13[0] * d13[0] + d13[1] * d13[1] + d13[2] * d13[2];
      static constexpr int kOrder[2][6] = {{0, 1, 2, 0, 2, 3}, {0, 1, 3, 1, 2, 3}};
      for (int k : kOrder[sqr02 < sqr13 ? 0 : 1]) out.corners.push_back(corner[k]);
    } else {
      clipper.Next(corner, size, &out.corners);
    }
    out.materials.insert(out.materials.end(), (out.corners.size() - before) / 3, material);
    corner += size;
  }
  if (!allTriangles) std::vector<tinyobj::index_t>().swap(piece.corners);
  std::vector<uint32_t>().swap(piece.sizes);
  return out;
}

// The materials of the MTL files the OBJ names, loaded as tinyobjloader loads them: each mtllib line tries its names in
// turn until one loads (a name loaded before is skipped); and the material each usemtl statement selects: the first
// of that name among the materials of the mtllib lines above it, else -1 (the default).
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

// A run of one block's triangles, converted as one task.
struct FacePiece {
  size_t shape, begin, end;       // shape: the block
  size_t kept = 0, firstOut = 0;  // triangles kept, and where the first of them goes in the Scene's arrays
  bool needsDefault = false;      // a kept face has no (defined) material
  size_t badNormals = 0;
  Vec3 lo{kInf}, hi{-kInf};
};

// Triangles, re-checking every index tinyobjloader returned (defence in depth); degenerate or non-finite ones
// are dropped and counted, and faces without a (defined) material get a grey default appended on first use.
// Two passes over pieces of faces: count what each piece keeps, then write each piece from its offset, so that the
// arrays hold the same bytes for any number of threads (one piece on a pool of one thread).
void AddTriangles(Scene& scene, const std::string& path, const tinyobj::attrib_t& attrib,
                  const std::vector<TriangleBlock>& blocks, size_t numObjMaterials, ThreadPool& pool) {
  size_t numV = attrib.vertices.size() / 3, numN = attrib.normals.size() / 3, numT = attrib.texcoords.size() / 2;
  size_t numFaces = 0;
  for (const TriangleBlock& block : blocks) numFaces += block.count;
  const size_t numPieces = pool.PiecesFor(numFaces, 1024);
  const size_t perPiece = std::max<size_t>(1, (numFaces + numPieces - 1) / numPieces);
  std::vector<FacePiece> pieces;
  for (size_t s = 0; s < blocks.size(); ++s)
    for (size_t f = 0; f < blocks[s].count; f += perPiece)
      pieces.push_back(FacePiece{s, f, std::min(f + perPiece, blocks[s].count)});
  auto material = [&](const FacePiece& piece, size_t f) {
    int m = blocks[piece.shape].materials[f];
    return m < 0 || size_t(m) >= numObjMaterials ? -1 : m;
  };

  // Pass 1: check the indices, count the triangles kept.
  pool.ParallelForEach(pieces.size(), [&](size_t i) {
    FacePiece& piece = pieces[i];
    const TriangleBlock& block = blocks[piece.shape];
    for (size_t f = piece.begin; f < piece.end; ++f) {
      const tinyobj::index_t* idx = &block.corners[3 * f];
      for (int k = 0; k < 3; ++k) {
        if (idx[k].vertex_index < 0 || size_t(idx[k].vertex_index) >= numV || idx[k].normal_index < -1 ||
            (idx[k].normal_index >= 0 && size_t(idx[k].normal_index) >= numN) || idx[k].texcoord_index < -1 ||
            (idx[k].texcoord_index >= 0 && size_t(idx[k].texcoord_index) >= numT))
          Fail(path, 0, "internal: an index out of range after parsing (shape " + Quote(block.name) + ")");
      }
      Vec3 p[3], ng;
      if (!FaceGeometry(attrib, idx, p, &ng)) continue;
      piece.kept++;
      piece.needsDefault = piece.needsDefault || material(piece, f) < 0;
    }
  });
  size_t kept = 0;
  bool needsDefault = false;
  for (FacePiece& piece : pieces) {
    piece.firstOut = kept;
    kept += piece.kept;
    needsDefault = needsDefault || piece.needsDefault;
  }
  scene.droppedTriangles = numFaces - kept;
  const int defaultMaterial = needsDefault ? int(scene.materials.size()) : -1;
  if (needsDefault) {
    HostMaterial grey;  // HostMaterial's defaults: diffuse, Kd 0.5
    grey.name = "default";
    scene.materials.push_back(grey);
  }
  ResizeOnHugePages(scene.positions, 3 * kept);
  ResizeOnHugePages(scene.normals, 3 * kept);
  ResizeOnHugePages(scene.uvs, 6 * kept);
  ResizeOnHugePages(scene.triMaterial, kept);

  // Pass 2: write the kept triangles.
  pool.ParallelForEach(pieces.size(), [&](size_t i) {
    FacePiece& piece = pieces[i];
    size_t out = piece.firstOut;
    for (size_t f = piece.begin; f < piece.end; ++f) {
      const tinyobj::index_t* idx = &blocks[piece.shape].corners[3 * f];
      Vec3 p[3], ng;
      if (!FaceGeometry(attrib, idx, p, &ng)) continue;
      for (int k = 0; k < 3; ++k) {
        Vec3 n = ng;
        if (idx[k].normal_index >= 0) {
          const tinyobj::real_t* fn = &attrib.normals[3 * size_t(idx[k].normal_index)];
          if (!NormalizeChecked(fn[0], fn[1], fn[2], &n)) {
            n = ng;
            piece.badNormals++;
          }
        }
        float u = 0.0f, v = 0.0f;
        if (idx[k].texcoord_index >= 0) {
          u = attrib.texcoords[2 * size_t(idx[k].texcoord_index)];
          v = attrib.texcoords[2 * size_t(idx[k].texcoord_index) + 1];
        }
        scene.positions[3 * out + size_t(k)] = p[k];
        scene.normals[3 * out + size_t(k)] = n;
        scene.uvs[6 * out + 2 * size_t(k)] = u;
        scene.uvs[6 * out + 2 * size_t(k) + 1] = v;
        piece.lo = Min(piece.lo, p[k]);
        piece.hi = Max(piece.hi, p[k]);
      }
      const int m = material(piece, f);
      scene.triMaterial[out++] = m < 0 ? defaultMaterial : m;
    }
  });
  size_t badNormals = 0;
  Vec3 lo(kInf), hi(-kInf);
  for (const FacePiece& piece : pieces) {  // in file order: Min and Max keep the later of equal values, as before
    badNormals += piece.badNormals;
    lo = Min(lo, piece.lo);
    hi = Max(hi, piece.hi);
  }
  if (scene.droppedTriangles)
    Warn(scene, path, 0,
         "dropped " + std::to_string(scene.droppedTriangles) + " degenerate (zero-area) or non-finite triangles");
  if (badNormals)
    Warn(scene, path, 0,
         std::to_string(badNormals) + " vertex normals are zero or not finite; used the face normal instead");
  if (scene.NumTriangles() == 0) Fail(path, 0, "no triangles");
  scene.boundsMin = lo;
  scene.boundsMax = hi;
}

}  // namespace

Scene LoadScene(const std::string& path, const LoadOptions& options) {
  Scene scene;
  scene.path = path;
  Stopwatch phase;
  std::string text;
  std::string why = ReadRegularFile(path, options.maxFileBytes, &text);
  if (!why.empty()) Fail(path, 0, why);
  scene.seconds.read = phase.Seconds();
  AssetFolders folders;
  folders.scene = RealPath(DirectoryOf(path));
  if (folders.scene.empty()) Fail(path, 0, "cannot resolve its folder");
  for (const std::string& dir : options.searchPaths) {
    std::string real = RealPath(dir);
    if (real.empty())
      Warn(scene, path, 0, "--texture-path " + dir + ": not found (" + std::strerror(errno) + "); not searched");
    else
      folders.extra.push_back(real);
  }

  // Our checks first, and with them our parse of the numbers and indices (each piece of the text on its own thread);
  // with tinyobjParse, the checks alone, after which tinyobjloader sees only finite numbers and in-range indices.
  phase.Restart();
  ThreadPool pool(ThreadPool::ThreadsFor(options.threads));
  ObjParse parsed;
  ObjScan scan = ScanObj(path, text, options, pool, options.tinyobjParse ? nullptr : &parsed);
  scene.seconds.validate = phase.Seconds();

  tinyobj::attrib_t tinyAttrib;
  std::vector<tinyobj::shape_t> shapes;
  std::vector<ObjTriangles> triangles;
  std::vector<TriangleBlock> blocks;
  std::vector<tinyobj::material_t> objMaterials;
  phase.Restart();
  GuardedMaterialReader reader(scene, folders, scan, options);
  if (options.tinyobjParse) {
    std::string tinyWarn, tinyErr;  // its warnings repeat what our passes report, with lines; not shown
    MemoryBuf buf(text);
    std::istream stream(&buf);
    bool ok = tinyobj::LoadObj(&tinyAttrib, &shapes, &objMaterials, &tinyWarn, &tinyErr, &stream, &reader,
                               /*triangulate=*/true, /*default_vcols_fallback=*/false);
    reader.RethrowPending();
    if (!ok) Fail(path, 0, "tinyobjloader: " + tinyErr);
    blocks = ShapeBlocks(path, shapes);
  } else {
    const std::vector<int> useMaterial = LoadObjMaterials(scan, reader, &objMaterials);
    reader.RethrowPending();
    triangles.resize(parsed.pieces.size());
    pool.ParallelForEach(parsed.pieces.size(), [&](size_t i) {
      triangles[i] = Triangulate(parsed.attrib.vertices, parsed.pieces[i], useMaterial);
    });
    for (const ObjTriangles& t : triangles)
      blocks.push_back({t.corners.data(), t.materials.data(), t.materials.size(), ""});
  }
  std::string().swap(text);  // the OBJ's text is not needed any more
  scene.seconds.parse = phase.Seconds();

  phase.Restart();
  AddMaterials(scene, path, folders, objMaterials, reader, scan, options);
  AddTriangles(scene, path, options.tinyobjParse ? tinyAttrib : parsed.attrib, blocks, objMaterials.size(), pool);

  size_t emitters = 0;
  for (int32_t m : scene.triMaterial) emitters += scene.materials[size_t(m)].IsEmissive();
  if (emitters == 0)
    Warn(scene, path, 0,
         "no emitters (no triangle has a material with Ke > 0); only an environment can light it: pass --env R,G,B or "
         "--env-map FILE.hdr");
  scene.seconds.convert = phase.Seconds();

  std::string cameraPath = CameraPathFor(path);
  struct stat st;
  if (stat(cameraPath.c_str(), &st) == 0) scene.camera = LoadCameraFile(cameraPath);
  return scene;
}

}  // namespace tracer

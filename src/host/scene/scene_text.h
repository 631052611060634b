// @file scene_text.h: the text of a scene's files as the loader reads it: lines, tokens, numbers, messages.
// Lines and tokens are split as tinyobjloader splits them, so that our line numbers are the ones its parse meets.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "tracer/core/math.h"
#include "tracer/host/scene_loader.h"

// The loader's private parts, shared by its sources (src/host/scene/): not API.
namespace tracer::loader {

// "path:line", or the path alone when the line is unknown (0).
std::string Where(const std::string& path, size_t line);
// Throws SceneError("path:line: message").
[[noreturn]] void Fail(const std::string& path, size_t line, const std::string& message);
// Collected, not printed: the caller prints them (the tracer deduplicates them and obeys --quiet).
void Warn(Scene& scene, const std::string& path, size_t line, const std::string& message);
std::string Quote(std::string_view s);
std::string FormatVec(Vec3 v);

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

// Space/tab separated tokens (tinyobjloader's separators).
void Tokenize(std::string_view line, std::vector<std::string_view>* tokens);

// True when the line holds an exponent of five or more digits after a digit or '.' ("1e-21474836481",
// also inside a longer word). Such a value is beyond any float, and tinyobjloader's number parser, which
// parses every token of a line that starts like a number, accumulates the exponent in an int that overflows
// (undefined behaviour; three fuzzer findings). Both scans refuse such lines before the library sees them.
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

enum class NumberKind { kNotNumber, kNonFinite, kFinite };

// Decimal numbers only (no hex: tinyobjloader would read "0x10" as 0). A value that is not finite as a
// float (nan, inf, 1e400, 1e39) is kNonFinite; underflow to zero is fine.
NumberKind ParseNumber(std::string_view token, float* value);

}  // namespace tracer::loader

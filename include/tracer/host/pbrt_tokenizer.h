// @file pbrt_tokenizer.h: the tokens of pbrt-v4's scene format: words (directives and bare words such as All),
// numbers, quoted strings, bools and the brackets of arrays, each with its file and line; comments skipped.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "tracer/host/pbrt_scene.h"

namespace tracer {

enum class PbrtTokenKind {
  kEnd,     // no more tokens in this file
  kWord,    // a directive name, or a bare word such as ActiveTransform's All
  kNumber,  // text and number
  kString,  // text is the contents, quotes removed and escapes decoded
  kBool,    // bare true or false (a quoted "true" is a string)
  kOpen,    // [
  kClose,   // ]
};

struct PbrtToken {
  PbrtTokenKind kind = PbrtTokenKind::kEnd;
  std::string text;
  double number = 0.0;  // kNumber's value; kBool's as 0 or 1
  int line = 0;
  // Whether a number token is written as an integer (digits with an optional sign): what "integer" accepts.
  bool IsInteger() const;
};

// The tokens of one file (or string), in order. Every error is a PbrtError naming the file and line.
class PbrtTokenizer {
 public:
  // Reads the whole file (a .gz file decompressed). Throws PbrtError when it cannot.
  static std::unique_ptr<PbrtTokenizer> FromFile(const std::string& path);
  PbrtTokenizer(std::string text, const std::string& fileName);

  PbrtToken Next();
  // The next token without taking it.
  const PbrtToken& Peek();
  const std::shared_ptr<const std::string>& File() const { return file_; }
  PbrtLoc Loc(int line) const { return PbrtLoc{file_, line}; }
  PbrtLoc Loc(const PbrtToken& token) const { return Loc(token.line); }

 private:
  PbrtToken Scan();
  void ScanString(PbrtToken& token);
  void ScanBare(PbrtToken& token);
  [[noreturn]] void Fail(int line, const std::string& message) const;

  std::string text_;
  std::shared_ptr<const std::string> file_;
  size_t pos_ = 0;
  int line_ = 1;
  bool peeked_ = false;
  PbrtToken peek_;
};

// "a word", "a number 1.5", "the string \"x\"", ... for error messages.
std::string DescribeToken(const PbrtToken& token);

}  // namespace tracer

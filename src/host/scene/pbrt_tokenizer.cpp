// @file pbrt_tokenizer.cpp: splits a pbrt-v4 scene file into tokens. The lexical rules are those of pbrt-v4's
// Tokenizer (src/pbrt/parser.cpp; file format documentation, "Overview"): white space separates tokens, `#` starts a
// comment to the end of the line, a string is double-quoted on one line with the escapes \b \f \n \r \t \\ \' \",
// `[` and `]` stand alone, and anything else runs to the next white space, quote or bracket.
#include "tracer/host/pbrt_tokenizer.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "tracer/host/gzip_file.h"

namespace tracer {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

bool EndsBare(char c) { return IsSpace(c) || c == '"' || c == '[' || c == ']'; }

// A number as pbrt writes them: an optional sign, digits with an optional point, an optional exponent. from_chars
// takes no leading '+', and is independent of the C locale (strtod is not: a "de_DE" locale reads "1,5").
bool ParseNumber(const std::string& text, double* value) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') {
    ++begin;
    if (begin != end && (*begin == '-' || *begin == '+')) return false;
  }
  auto result = std::from_chars(begin, end, *value);
  return result.ec == std::errc() && result.ptr == end && std::isfinite(*value);
}

bool LooksNumeric(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.'; }

}  // namespace

bool PbrtToken::IsInteger() const {
  if (kind != PbrtTokenKind::kNumber || text.empty()) return false;
  size_t i = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (i == text.size()) return false;
  for (; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  return true;
}

std::unique_ptr<PbrtTokenizer> PbrtTokenizer::FromFile(const std::string& path) {
  std::string text;
  try {
    text = ReadFileBytes(path);
  } catch (const std::runtime_error& e) {
    // ReadFileBytes's message already starts with the path.
    throw PbrtError(path, 0, std::string(e.what()).substr(path.size() + 2));
  }
  return std::make_unique<PbrtTokenizer>(std::move(text), path);
}

PbrtTokenizer::PbrtTokenizer(std::string text, const std::string& fileName)
    : text_(std::move(text)), file_(std::make_shared<const std::string>(fileName)) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text_.data());
  // pbrt reads UTF-8 only; a UTF-16 file would otherwise fail on its first character with an odd message.
  if (text_.size() >= 2 && ((bytes[0] == 0xfe && bytes[1] == 0xff) || (bytes[0] == 0xff && bytes[1] == 0xfe)))
    Fail(1, "the file is UTF-16; pbrt scene files are UTF-8");
  if (text_.size() >= 3 && bytes[0] == 0xef && bytes[1] == 0xbb && bytes[2] == 0xbf) pos_ = 3;  // UTF-8 BOM
}

void PbrtTokenizer::Fail(int line, const std::string& message) const { throw PbrtError(*file_, line, message); }

const PbrtToken& PbrtTokenizer::Peek() {
  if (!peeked_) {
    peek_ = Scan();
    peeked_ = true;
  }
  return peek_;
}

PbrtToken PbrtTokenizer::Next() {
  if (peeked_) {
    peeked_ = false;
    return std::move(peek_);
  }
  return Scan();
}

PbrtToken PbrtTokenizer::Scan() {
  PbrtToken token;
  for (;;) {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
    if (pos_ < text_.size() && text_[pos_] == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') ++pos_;
      continue;
    }
    break;
  }
  token.line = line_;
  if (pos_ >= text_.size()) return token;  // kEnd
  const char c = text_[pos_];
  if (c == '"') {
    ScanString(token);
  } else if (c == '[' || c == ']') {
    token.kind = c == '[' ? PbrtTokenKind::kOpen : PbrtTokenKind::kClose;
    token.text.assign(1, c);
    ++pos_;
  } else {
    ScanBare(token);
  }
  return token;
}

void PbrtTokenizer::ScanString(PbrtToken& token) {
  token.kind = PbrtTokenKind::kString;
  ++pos_;  // the opening quote
  for (;;) {
    if (pos_ >= text_.size()) Fail(token.line, "unterminated string: the file ends before its closing quote");
    const char c = text_[pos_++];
    if (c == '"') return;
    if (c == '\n' || c == '\r') Fail(token.line, "unterminated string: a newline before its closing quote");
    if (c != '\\') {
      token.text.push_back(c);
      continue;
    }
    if (pos_ >= text_.size()) Fail(token.line, "unterminated string: the file ends after a '\\'");
    // The escapes pbrt-v4's tokenizer decodes, and what they stand for.
    static const char kEscaped[] = "bfnrt\\'\"";
    static const char kDecoded[] = "\b\f\n\r\t\\'\"";
    const char e = text_[pos_++];
    const char* found = e != '\0' ? std::strchr(kEscaped, e) : nullptr;
    if (!found) Fail(token.line, std::string("unknown escape '\\") + e + "' in a string");
    token.text.push_back(kDecoded[found - kEscaped]);
  }
}

void PbrtTokenizer::ScanBare(PbrtToken& token) {
  const size_t begin = pos_;
  while (pos_ < text_.size() && !EndsBare(text_[pos_])) ++pos_;
  token.text.assign(text_, begin, pos_ - begin);
  if (token.text == "true" || token.text == "false") {
    token.kind = PbrtTokenKind::kBool;
    token.number = token.text == "true" ? 1.0 : 0.0;
  } else if (LooksNumeric(token.text[0])) {
    token.kind = PbrtTokenKind::kNumber;
    if (!ParseNumber(token.text, &token.number)) Fail(token.line, "\"" + token.text + "\" is not a number");
  } else {
    token.kind = PbrtTokenKind::kWord;
  }
}

std::string DescribeToken(const PbrtToken& token) {
  switch (token.kind) {
    case PbrtTokenKind::kEnd:
      return "the end of the file";
    case PbrtTokenKind::kWord:
      return "the word " + token.text;
    case PbrtTokenKind::kNumber:
      return "the number " + token.text;
    case PbrtTokenKind::kString:
      return "the string \"" + token.text + "\"";
    case PbrtTokenKind::kBool:
      return "the bool " + token.text;
    case PbrtTokenKind::kOpen:
      return "'['";
    case PbrtTokenKind::kClose:
      return "']'";
  }
  return "a token";
}

}  // namespace tracer

// @file json_mini.h: a small JSON parser for the tests (checks the reports the program writes).
#pragma once
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tracer::test {

struct Json {
  enum Type { kNull, kBool, kNumber, kString, kArray, kObject } type = kNull;
  bool boolean = false;
  double number = 0.0;
  std::string str;
  std::vector<Json> array;
  std::map<std::string, Json> object;
  bool Has(const std::string& k) const { return type == kObject && object.count(k) > 0; }
  const Json& operator[](const std::string& k) const { return object.at(k); }
};

class JsonParser {
 public:
  static Json Parse(const std::string& text) {
    JsonParser p(text);
    Json v = p.Value();
    p.Space();
    if (p.i_ != text.size()) p.Fail("trailing characters");
    return v;
  }

 private:
  explicit JsonParser(const std::string& t) : s_(t) {}
  [[noreturn]] void Fail(const char* what) {
    throw std::runtime_error(std::string("JSON: ") + what + " at " + std::to_string(i_));
  }
  void Space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Eat(char c) {
    Space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Eat(c)) Fail("unexpected character");
  }
  std::string String() {
    Expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\') {
        if (i_ >= s_.size()) Fail("bad escape");
        char e = s_[i_++];
        if (e == 'u') {
          if (i_ + 4 > s_.size()) Fail("bad \\u escape");
          out += static_cast<char>(std::strtol(s_.substr(i_, 4).c_str(), nullptr, 16));
          i_ += 4;
        } else {
          out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        }
      } else {
        out += c;
      }
    }
    if (i_ >= s_.size()) Fail("unterminated string");
    ++i_;
    return out;
  }
  Json Value() {
    Space();
    if (i_ >= s_.size()) Fail("unexpected end");
    Json v;
    char c = s_[i_];
    if (c == '{') {
      ++i_;
      v.type = Json::kObject;
      if (Eat('}')) return v;
      do {
        Space();
        std::string k = String();
        Expect(':');
        v.object[k] = Value();
      } while (Eat(','));
      Expect('}');
    } else if (c == '[') {
      ++i_;
      v.type = Json::kArray;
      if (Eat(']')) return v;
      do v.array.push_back(Value());
      while (Eat(','));
      Expect(']');
    } else if (c == '"') {
      v.type = Json::kString;
      v.str = String();
    } else if (s_.compare(i_, 4, "true") == 0 || s_.compare(i_, 5, "false") == 0) {
      v.type = Json::kBool;
      v.boolean = s_[i_] == 't';
      i_ += v.boolean ? 4 : 5;
    } else if (s_.compare(i_, 4, "null") == 0) {
      i_ += 4;
    } else {
      char* end = nullptr;
      v.number = std::strtod(s_.c_str() + i_, &end);
      if (end == s_.c_str() + i_) Fail("bad value");
      v.type = Json::kNumber;
      i_ = static_cast<size_t>(end - s_.c_str());
    }
    return v;
  }
  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace tracer::test

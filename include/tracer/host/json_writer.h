// @file json_writer.h: a minimal streaming JSON writer for the profile and benchmark reports.
#pragma once
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace tracer {

class JsonWriter {
 public:
  void BeginObject(const char* key = nullptr) { Open(key, '{'); }
  void EndObject() { Close('}'); }
  void BeginArray(const char* key = nullptr) { Open(key, '['); }
  void EndArray() { Close(']'); }
  void Field(const char* key, const std::string& v) { Key(key), out_ += Quote(v); }
  void Field(const char* key, const char* v) { Field(key, std::string(v)); }
  void Field(const char* key, double v) {
    Key(key);
    if (!std::isfinite(v)) {
      out_ += "null";
      return;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    out_ += buf;
  }
  void Field(const char* key, long long v) { Key(key), out_ += std::to_string(v); }
  void Field(const char* key, int v) { Field(key, static_cast<long long>(v)); }
  void Field(const char* key, unsigned long long v) { Key(key), out_ += std::to_string(v); }
  void Field(const char* key, bool v) { Key(key), out_ += v ? "true" : "false"; }
  const std::string& Str() const { return out_; }

 private:
  void Key(const char* key) {
    Comma();
    if (key) out_ += Quote(key) + ": ";
  }
  void Comma() {
    if (!first_.empty()) {
      if (!first_.back()) out_ += ", ";
      first_.back() = false;
    }
  }
  void Open(const char* key, char c) {
    Key(key);
    out_ += c;
    first_.push_back(true);
  }
  void Close(char c) {
    first_.pop_back();
    out_ += c;
  }
  static std::string Quote(const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\')
        q += '\\', q += c;
      else if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        q += buf;
      } else
        q += c;
    }
    return q + "\"";
  }
  std::string out_;
  std::vector<bool> first_;
};

}  // namespace tracer

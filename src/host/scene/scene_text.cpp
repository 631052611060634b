// @file scene_text.cpp: the loader's messages, tokens and number checks (scene_text.h).
#include "scene_text.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace tracer::loader {

std::string Where(const std::string& path, size_t line) { return line ? path + ":" + std::to_string(line) : path; }

[[noreturn]] void Fail(const std::string& path, size_t line, const std::string& message) {
  throw SceneError(Where(path, line) + ": " + message);
}

void Warn(Scene& scene, const std::string& path, size_t line, const std::string& message) {
  scene.warnings.push_back(Where(path, line) + ": " + message);
}

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string FormatVec(Vec3 v) {
  std::ostringstream ss;
  ss << "(" << v.x << ", " << v.y << ", " << v.z << ")";
  return ss.str();
}

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

NumberKind ParseNumber(std::string_view token, float* value) {
  if (token.empty() || token.find_first_of("xX") != std::string_view::npos) return NumberKind::kNotNumber;
  std::string s(token);
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return NumberKind::kNotNumber;
  *value = float(d);
  return std::isfinite(*value) ? NumberKind::kFinite : NumberKind::kNonFinite;
}

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

}  // namespace tracer::loader

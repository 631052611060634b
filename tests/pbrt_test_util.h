// @file pbrt_test_util.h: helpers for the pbrt parser's tests: parsing snippets, catching their errors.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tracer/host/pbrt_parser.h"

namespace tracer::test {

// A scene from text named "s.pbrt", its Include/Import and ResolvePath relative to `dir`.
inline PbrtScene ParsePbrt(const std::string& text, const std::string& dir = "/tmp") {
  return ParsePbrtString(text, "s.pbrt", dir);
}

// The same after a WorldBegin on line 1: the snippet's first line is line 2.
inline PbrtScene ParseWorld(const std::string& world) { return ParsePbrt("WorldBegin\n" + world); }

// The message of the PbrtError that f() throws, or "" when it throws none.
template <typename F>
std::string PbrtErrorFrom(F&& f) {
  try {
    f();
  } catch (const PbrtError& e) {
    return e.what();
  }
  return "";
}

// The message of the PbrtError that parsing throws, or "" when it parses.
inline std::string PbrtErrorOf(const std::string& text, const std::string& dir = "/tmp") {
  return PbrtErrorFrom([&] { ParsePbrt(text, dir); });
}

inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

inline ::testing::AssertionResult Near(const PbrtTransform& a, const PbrtTransform& b, double eps = 1e-9) {
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      if (std::fabs(a.m[i][j] - b.m[i][j]) > eps)
        return ::testing::AssertionFailure()
               << "m[" << i << "][" << j << "] = " << a.m[i][j] << ", expected " << b.m[i][j];
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult Near(const PbrtVec3& a, const PbrtVec3& b, double eps = 1e-9) {
  for (int i = 0; i < 3; ++i)
    if (std::fabs(a[i] - b[i]) > eps)
      return ::testing::AssertionFailure()
             << "(" << a[0] << ", " << a[1] << ", " << a[2] << ") != (" << b[0] << ", " << b[1] << ", " << b[2] << ")";
  return ::testing::AssertionSuccess();
}

// A transform from its rows, for hand-computed matrices.
inline PbrtTransform Rows(std::array<std::array<double, 4>, 4> m) {
  PbrtTransform t;
  t.m = m;
  return t;
}

}  // namespace tracer::test

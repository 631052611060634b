// @file loader_parse_test.cpp: our parallel checks and parse give the Scene of one pass and of tinyobjloader's parse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "loader_test_util.h"

namespace tracer::test {
namespace {

// ---- the checks before and after tinyobjloader, in parallel -------------------------------------------

// An OBJ of rows x cols quads, lines as a list (line n is element n - 1): rows of v/vt/vn interleaved with faces,
// absolute indices in even rows and relative ones in odd rows, a material per row (every third one undefined),
// every 13th normal zero and a degenerate triangle after every 17th quad, so that each tally of the loader's
// parallel passes (kept and dropped triangles, bad normals, the default material, bounds) has something to count.
std::vector<std::string> GridObjLines(int rows, int cols, int* degenerate) {
  std::vector<std::string> lines = {"mtllib m.mtl"};
  auto number = [](double v) { return std::to_string(v); };
  int vertices = 0, quads = 0;
  *degenerate = 0;
  for (int r = 0; r <= rows; ++r) {
    for (int c = 0; c <= cols; ++c) {
      const double x = c * 0.5, z = r * 0.5, y = std::sin(0.3 * c) * std::cos(0.2 * r);
      lines.push_back("v " + number(x) + " " + number(y) + " " + number(z));
      lines.push_back("vt " + number(c / double(cols)) + " " + number(r / double(rows)));
      lines.push_back(++vertices % 13 ? "vn " + number(-y) + " 1 0.1" : "vn 0 0 0");
    }
    if (r == 0) continue;
    lines.push_back(r % 3 == 2 ? "usemtl undefined" : r % 3 ? "usemtl a" : "usemtl b");
    auto index = [&](int row, int col) {
      const int absolute = row * (cols + 1) + col + 1;
      const int written = r % 2 ? absolute - (vertices + 1) : absolute;  // odd rows: relative to the end
      const std::string i = std::to_string(written);
      return i + "/" + i + "/" + i;
    };
    for (int c = 0; c < cols; ++c) {
      lines.push_back("f " + index(r - 1, c) + " " + index(r, c) + " " + index(r, c + 1) + " " + index(r - 1, c + 1));
      if (++quads % 17 == 0) {
        lines.push_back("f " + index(r, c) + " " + index(r, c) + " " + index(r, c + 1));
        ++*degenerate;
      }
    }
  }
  return lines;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

TEST_F(LoaderTest, ParallelChecksGiveTheSceneOfOnePass) {
  Write("m.mtl", "newmtl a\nKd 0.5 0.5 0.5\nnewmtl b\nKd 0.2 0.2 0.2\nKe 1 1 1\n");
  int degenerate = 0;
  const std::string path = Write("grid.obj", Join(GridObjLines(120, 90, &degenerate)));
  LoadOptions one, many;
  one.threads = 1;
  many.threads = 5;  // more than the cores of CI: pieces then run in any order
  const Scene a = LoadScene(path, one), b = LoadScene(path, many);
  EXPECT_EQ(a.NumTriangles(), 2u * 120 * 90);
  EXPECT_EQ(a.droppedTriangles, static_cast<size_t>(degenerate));
  // The dropped triangles' numbers, read from the lines: each f line's triangles numbered on (a quad's two, a
  // triangle's one), the degenerate ones those with a repeated corner. Many pieces must keep them in file order.
  std::vector<int64_t> dropped;
  int64_t number = 0;
  for (const std::string& line : GridObjLines(120, 90, &degenerate)) {
    if (line.rfind("f ", 0) != 0) continue;
    std::istringstream tokens(line.substr(2));
    const std::vector<std::string> corners{std::istream_iterator<std::string>(tokens), {}};
    if (corners.size() == 3 && corners[0] == corners[1]) dropped.push_back(number);
    number += static_cast<int64_t>(corners.size()) - 2;
  }
  EXPECT_EQ(a.triangleNumbers.dropped, dropped);
  EXPECT_EQ(a.materials.size(), 3u) << "a, b and the default for the undefined one";
  EXPECT_TRUE(HasWarning(a, "vertex normals are zero"));
  ExpectSameScene(a, b);
}

// Numbers written as exporters write them, and as they may: signs, no integer or fraction digits, exponents, more
// than 8 fractional digits (tinyobjloader's table ends at 10^-7), and values that are not exactly representable,
// where a parser that rounds differently from tinyobjloader's gives another float.
std::string ObjNumberText(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double x = u(rng) * std::pow(10.0, std::uniform_int_distribution<int>(-3, 3)(rng));
  static const char* const kFormats[] = {"%.6f", "%.9g", "%.17g", "%.4e", "%+.3E", "%.12f"};
  const int kind = std::uniform_int_distribution<int>(0, 7)(rng);
  char text[64];
  if (kind < 6) {
    std::snprintf(text, sizeof text, kFormats[kind], x);
    return text;
  }
  if (kind == 6) return std::to_string(int(x * 10)) + ".";  // "12."
  std::snprintf(text, sizeof text, "%.5f", std::fabs(x) < 1.0 ? x : x / 100.0);
  std::string t = text;  // "0.12345" -> ".12345", "-0.12345" -> "-.12345"
  const size_t zero = t.find("0.");
  if (zero != std::string::npos && (zero == 0 || t[zero - 1] == '-')) t.erase(zero, 1);
  return t;
}

// Everything our parse does in tinyobjloader's place: numbers, the optional parts of v/vt lines, relative indices,
// triangles, quads both ways, convex and concave polygons up to 9 corners, usemtl before, between and after the
// mtllib lines (one of which names a missing file first, another an MTL loaded before), undefined and repeated
// usemtl, one without a blank before its name, groups and objects, comments after the numbers.
std::string TrickyObj(std::mt19937& rng) {
  std::string obj = "# tricky\nusemtl a\n";  // before any mtllib: tinyobjloader's default (-1)
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int vertices = 0, normals = 0, texcoords = 0;
  auto number = [&] { return ObjNumberText(rng); };
  for (int group = 0; group < 40; ++group) {
    if (group == 3) obj += "mtllib missing.mtl m.mtl\n";
    if (group == 9) obj += "mtllib m.mtl n.mtl\n";  // m.mtl again: skipped, n.mtl loaded
    if (group % 7 == 0) obj += std::string(group % 2 ? "g" : "o") + " part" + std::to_string(group) + "\n";
    const char* uses[] = {"a", "b", "c", "undefined", "b"};
    obj += "usemtl " + std::string(uses[group % 5]) + "\n";
    if (group % 11 == 5) obj += "usemtl c\n";  // two in a row: the second counts
    if (group % 13 == 6) obj += "usemtlb\n";   // tinyobjloader reads this as "usemtl b"
    // A polygon of n corners around a centre, every other corner pulled in when concave.
    const int n = 3 + group % 7;
    const bool concave = group % 3 == 1 && n > 4;
    const double cx = u(rng) * 10, cz = u(rng) * 10, tilt = u(rng) - 0.5;
    for (int k = 0; k < n; ++k) {
      const double angle = 6.283185307179586 * k / n + 0.1 * u(rng);
      const double radius = (concave && k % 2) ? 0.4 : 1.0 + 0.2 * u(rng);
      const double x = cx + radius * std::cos(angle), z = cz + radius * std::sin(angle);
      char line[160];
      std::snprintf(line, sizeof line, "v %.7f %.7f %.7f", x, tilt * x + 0.01 * u(rng), z);
      obj += line;
      obj += k % 4 == 0 ? " 0.5 0.5 0.5\n" : k % 4 == 1 ? " # a comment\n" : "\n";
      obj += "vn " + number() + " " + number() + " " + number() + "\n";
      obj += k % 3 == 0   ? "vt " + number() + "\n"
             : k % 3 == 1 ? "vt " + number() + " " + number() + " 0\n"
                          : "vt " + number() + " " + number() + "\n";
    }
    vertices += n, normals += n, texcoords += n;
    obj += "f";
    for (int k = 0; k < n; ++k) {
      const int v = vertices - n + k + 1, t = texcoords - n + k + 1, nn = normals - n + k + 1;
      switch ((group + k) % 4) {
        case 0:
          obj += " " + std::to_string(v);
          break;
        case 1:
          obj += " " + std::to_string(v) + "/" + std::to_string(t);
          break;
        case 2:
          obj += " " + std::to_string(v - vertices - 1) + "//" + std::to_string(nn - normals - 1);
          break;
        default:
          obj += " " + std::to_string(v) + "/" + std::to_string(t) + "/" + std::to_string(nn);
          break;
      }
    }
    obj += "\n";
    // A quad over four random vertices so far, in both diagonal orders over the file.
    auto any = [&] { return std::to_string(1 + std::uniform_int_distribution<int>(0, vertices - 1)(rng)); };
    obj += "f " + any() + " " + any() + " " + any() + " " + any() + "\n";
  }
  // A square: its diagonals are equally long, and tinyobjloader then cuts along 1-3.
  return obj + "usemtl b\nf -1 -2 -3\nv 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nf -4 -3 -2 -1\n";
}

TEST_F(LoaderTest, OurParseGivesTinyobjloadersSceneByteForByte) {
  Write("m.mtl", "newmtl a\nKd 0.5 0.5 0.5\nnewmtl b\nKd 0.2 0.2 0.2\nKe 1 1 1\n");
  Write("n.mtl", "newmtl c\nKd 0.1 0.7 0.1\nnewmtl a\nKd 0.9 0.9 0.9\n");  // a again: the first one counts
  for (unsigned seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    const std::string path = Write("tricky.obj", TrickyObj(rng));
    LoadOptions tinyobj, one, many;
    tinyobj.tinyobjParse = true;
    one.threads = 1;
    many.threads = 5;
    const Scene reference = LoadScene(path, tinyobj);
    EXPECT_GT(reference.NumTriangles(), 200u);
    EXPECT_TRUE(HasWarning(reference, "usemtl 'undefined' names an undefined material"));
    ExpectSameScene(LoadScene(path, one), reference);
    ExpectSameScene(LoadScene(path, many), reference);
  }
}

// mtllib lines at the edges of tinyobjloader's reading (a name ending in a lone backslash, which it drops; a trailing
// blank, after which it asks for a file named ""; "mtllib" with nothing after it, which is no statement), and the
// lines we do not render but tinyobjloader refuses (l and p with a zero index, vw with a joint that is no number):
// the same scene as its parse, or an error naming the line.
TEST_F(LoaderTest, MtllibEdgesAndUnrenderedLinesAsTinyobjloaderReadsThem) {
  Write("m.mtl", "newmtl a\nKd 0.9 0.1 0.1\n");
  LoadOptions tinyobj;
  tinyobj.tinyobjParse = true;
  const std::pair<const char*, const char*> cases[] = {{"mtllib m.mtl\\\n", ""},
                                                       {"mtllib \n", ""},
                                                       {"mtllib missing.mtl m.mtl \n", ""},
                                                       {"mtllib\nmtllib m.mtl\n", ""},
                                                       {"mtllib m.mtl\n", "l 1 2\np 1\nvw 1 0 0.5 2 0.5\n"}};
  for (const auto& [head, tail] : cases) {
    SCOPED_TRACE(std::string(head) + tail);
    const std::string path = Write("edge.obj", std::string(head) + kTriangle + tail + "usemtl a\nf 1 2 3\n");
    const Scene ours = LoadScene(path), reference = LoadScene(path, tinyobj);
    ExpectSameScene(ours, reference);
  }
  const Scene backslash =
      LoadScene(Write("edge.obj", std::string("mtllib m.mtl\\\n") + kTriangle + "usemtl a\nf 1 2 3\n"));
  EXPECT_FALSE(HasWarning(backslash, "undefined material"));
  for (const char* bad : {"l 0 1", "p 0", "l 1 9", "vw 1 x 0.5"}) {
    SCOPED_TRACE(bad);
    const std::string path = Write("bad.obj", std::string(kTriangle) + bad + "\nf 1 2 3\n");
    EXPECT_TRUE(Contains(LoadError(path), "bad.obj:4:")) << LoadError(path);
  }
}

// The number reader against tinyobjloader's on single values that tell rounding apart.
TEST_F(LoaderTest, NumbersAreReadAsTinyobjloaderReadsThem) {
  std::mt19937 rng(7);
  std::string obj;
  for (int i = 0; i < 3000; ++i) obj += "v " + ObjNumberText(rng) + " " + ObjNumberText(rng) + " 0\n";
  // Midpoints between neighbouring floats, with 16 or 17 digits: tinyobjloader's sums of digits times 10^-k round
  // these to the other neighbour than strtof does (found by a search over random midpoints; 6-decimal numbers, as
  // exporters write them, agreed on 10M of 10M).
  const char* midpoints[] = {"77.63354873657227",   "-945.2247619628906", "68.827884674072266", "556.77847290039062",
                             "752.7783508300781",   "756.2849426269531",  "500.2885894775391",  "-793.5479431152344",
                             "-853.27163696289062", "168.77832794189453", "399.5167388916016",  "451.9959869384766"};
  for (const char* m : midpoints) obj += std::string("v ") + m + " " + m + " 1\n";
  obj += "v 0.333333333333 1.00000005960464477539 16777217\nv -0 +.5 5.e-3\nv 1e-40 3.4028234e38 -1.17549435e-38\n";
  obj += "f 1 2 3\n";
  const std::string path = Write("numbers.obj", obj);
  LoadOptions tinyobj;
  tinyobj.tinyobjParse = true;
  // Every vertex reaches the Scene through a triangle: one per vertex, against two fixed corners.
  for (int i = 0; i < 3015; ++i) obj += "f " + std::to_string(i + 1) + " -1 -2\n";
  Write("numbers.obj", obj);
  const Scene ours = LoadScene(path), reference = LoadScene(path, tinyobj);
  EXPECT_GT(ours.NumTriangles(), 2900u);
  ExpectSameScene(ours, reference);
}

TEST_F(LoaderTest, ParallelChecksReportTheFirstErrorWithItsLineAndCount) {
  int degenerate = 0;
  const std::vector<std::string> grid = GridObjLines(100, 80, &degenerate);
  // The vertices defined before line n (1-based), counted here from the lines themselves.
  auto verticesBefore = [&](size_t n) {
    return std::count_if(grid.begin(), grid.begin() + static_cast<long>(n - 1),
                         [](const std::string& l) { return l.rfind("v ", 0) == 0; });
  };
  const size_t early = grid.size() / 4, late = grid.size() * 4 / 5;  // line numbers of the inserted bad lines
  for (bool both : {true, false}) {
    std::vector<std::string> lines = grid;
    lines.insert(lines.begin() + static_cast<long>(late - 1), "f 1 2 999999999");
    if (both) lines.insert(lines.begin() + static_cast<long>(early - 1), "v 1 nan 2");
    const std::string path = Write("bad.obj", Join(lines));
    LoadOptions one, many;
    one.threads = 1;
    many.threads = 5;
    const std::string error = LoadError(path, many);
    EXPECT_EQ(error, LoadError(path, one));
    if (both) {
      EXPECT_TRUE(Contains(error, "bad.obj:" + std::to_string(early) + ":")) << error;
    } else {
      EXPECT_TRUE(Contains(error, "bad.obj:" + std::to_string(late) + ":")) << error;
      EXPECT_TRUE(Contains(error, std::to_string(verticesBefore(late)) + " vertices defined so far")) << error;
    }
  }
}

}  // namespace
}  // namespace tracer::test

// @file pbrt_files_test.cpp: the pbrt parser across files: Include (textual, found beside the including file or in
// the main file's folder), Import (its graphics state kept to itself), errors that name the included file, include
// cycles, gzip-compressed scene files, and file names resolved as pbrt resolves them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <utility>
#include <vector>

#include "pbrt_test_util.h"
#include "test_util.h"
#include "tracer/host/gzip_file.h"

namespace tracer {
namespace {

using test::Contains;
using test::WriteFile;

class PbrtFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::MakeTempDir();
    ASSERT_EQ(std::system(("mkdir -p '" + dir_ + "/sub'").c_str()), 0);
  }
  void TearDown() override { test::RemoveTree(dir_); }
  // Writes the files (name, text) under the temporary folder.
  void WriteFiles(const std::vector<std::pair<std::string, std::string>>& files) {
    for (const auto& [name, text] : files) WriteFile(dir_ + "/" + name, text);
  }
  // Writes the files, then returns the error of parsing the first.
  std::string ErrorWith(const std::vector<std::pair<std::string, std::string>>& files) {
    WriteFiles(files);
    return ErrorOf(dir_ + "/" + files[0].first);
  }
  std::string ErrorOf(const std::string& path) {
    return test::PbrtErrorFrom([&] { ParsePbrtFile(path); });
  }
  std::string dir_;
};

TEST_F(PbrtFiles, IncludeIsTextualAndRelative) {
  WriteFile(dir_ + "/main.pbrt",
            "Include \"sub/camera.pbrt\"\n"
            "WorldBegin\n"
            "Include \"sub/geometry.pbrt\"\n"
            "Shape \"sphere\"\n");
  WriteFile(dir_ + "/sub/camera.pbrt", "LookAt 0 0 -1 0 0 0 0 1 0\nCamera \"perspective\" \"float fov\" 30\n");
  // Beside the including file (sub/), then in the main file's folder, where pbrt-v4 itself looks.
  WriteFile(dir_ + "/sub/geometry.pbrt", "Translate 1 0 0\nInclude \"mat.pbrt\"\nInclude \"top.pbrt\"\n");
  WriteFile(dir_ + "/sub/mat.pbrt", "Material \"conductor\"\n");
  WriteFile(dir_ + "/top.pbrt", "\nShape \"plymesh\" \"string filename\" \"models/m.ply\"\n");
  PbrtScene s = ParsePbrtFile(dir_ + "/main.pbrt");
  EXPECT_EQ(s.camera.params.GetFloat("fov", 0), 30.0);
  EXPECT_EQ(s.camera.loc.ToString(), dir_ + "/sub/camera.pbrt:2");
  ASSERT_EQ(s.shapes.size(), 2u);
  EXPECT_EQ(s.shapes[0].loc.ToString(), dir_ + "/top.pbrt:2");
  // Textual: the included Translate and Material are still in force in the including file.
  EXPECT_EQ(s.shapes[1].objectToWorld, PbrtTransform::Translate(1, 0, 0));
  EXPECT_EQ(s.materials[s.shapes[1].material].type, "conductor");
  EXPECT_EQ(s.files.size(), 5u);
  EXPECT_EQ(s.searchDir, dir_);
  // File-valued parameters resolve against the main file's folder, wherever the Shape stands.
  EXPECT_EQ(s.ResolvePath(s.shapes[0].params.GetString("filename", "")), dir_ + "/models/m.ply");
  EXPECT_EQ(s.ResolvePath("/abs/x.ply"), "/abs/x.ply");
}

TEST_F(PbrtFiles, ErrorsNameTheIncludedFile) {
  EXPECT_EQ(ErrorWith({{"main.pbrt", "WorldBegin\nInclude \"sub/bad.pbrt\"\n"},
                       {"sub/bad.pbrt", "Shape \"sphere\"\n\nShape \"sphere\" \"point3 p\" [ 1 2 ]\n"}}),
            dir_ + "/sub/bad.pbrt:3: \"point3 p\": 2 values, not a multiple of the 3 of a point3");
}

TEST_F(PbrtFiles, MissingIncludeNamesTheIncludeLine) {
  const std::string e = ErrorWith({{"main.pbrt", "WorldBegin\n\nInclude \"nothere.pbrt\"\n"}});
  EXPECT_TRUE(Contains(e, dir_ + "/main.pbrt:3: Include \"nothere.pbrt\": " + dir_ + "/nothere.pbrt: cannot open"));
  EXPECT_TRUE(Contains(ErrorOf(dir_ + "/absent.pbrt"), dir_ + "/absent.pbrt: cannot open"));
}

TEST_F(PbrtFiles, IncludeCycleIsAnError) {
  EXPECT_TRUE(Contains(ErrorWith({{"a.pbrt", "Include \"b.pbrt\"\n"}, {"b.pbrt", "Include \"a.pbrt\"\n"}}),
                       "files nested more than 32 deep"));
}

TEST_F(PbrtFiles, ImportKeepsItsGraphicsStateButSharesNames) {
  WriteFiles({{"main.pbrt",
               "WorldBegin\nMaterial \"diffuse\"\nImport \"sub/part.pbrt\"\nShape \"sphere\"\n"
               "NamedMaterial \"gold\"\nShape \"sphere\"\n"},
              {"sub/part.pbrt",
               "Translate 5 0 0\nMaterial \"dielectric\"\n"
               "MakeNamedMaterial \"gold\" \"string type\" \"conductor\"\nShape \"disk\"\n"}});
  PbrtScene s = ParsePbrtFile(dir_ + "/main.pbrt");
  ASSERT_EQ(s.shapes.size(), 3u);
  EXPECT_EQ(s.shapes[0].type, "disk");
  EXPECT_EQ(s.shapes[0].objectToWorld, PbrtTransform::Translate(5, 0, 0));
  EXPECT_EQ(s.materials[s.shapes[0].material].type, "dielectric");
  // After the Import: its Translate and Material are gone, its named material stays.
  EXPECT_TRUE(s.shapes[1].objectToWorld.IsIdentity());
  EXPECT_EQ(s.materials[s.shapes[1].material].type, "diffuse");
  EXPECT_EQ(s.materials[s.shapes[2].material].type, "conductor");
  EXPECT_EQ(s.directives.at("Import").count, 1u);
}

TEST_F(PbrtFiles, ImportErrors) {
  EXPECT_EQ(ErrorWith({{"early.pbrt", "Import \"x.pbrt\"\nWorldBegin\n"}}),
            dir_ + "/early.pbrt:1: Import describes the world: it must come after WorldBegin");
  EXPECT_EQ(ErrorWith({{"open.pbrt", "WorldBegin\nImport \"sub/open.pbrt\"\n"}, {"sub/open.pbrt", "AttributeBegin\n"}}),
            dir_ + "/sub/open.pbrt:1: AttributeBegin is not closed before the end of the file imported at " + dir_ +
                "/open.pbrt:2");
  EXPECT_EQ(ErrorWith({{"close.pbrt", "WorldBegin\nAttributeBegin\nImport \"sub/close.pbrt\"\nAttributeEnd\n"},
                       {"sub/close.pbrt", "AttributeEnd\n"}}),
            dir_ + "/sub/close.pbrt:1: AttributeEnd without a matching AttributeBegin in this imported file");
}

TEST_F(PbrtFiles, GzipCompressedScene) {
  WriteFile(dir_ + "/scene.pbrt", "WorldBegin\nShape \"sphere\" \"float radius\" 4\n");
  if (std::system(("gzip -k '" + dir_ + "/scene.pbrt' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "the gzip tool is not installed: cannot make a .pbrt.gz";
  if (!GzipSupported()) {
    EXPECT_TRUE(Contains(ErrorOf(dir_ + "/scene.pbrt.gz"), "no zlib"));
    return;
  }
  PbrtScene s = ParsePbrtFile(dir_ + "/scene.pbrt.gz");
  ASSERT_EQ(s.shapes.size(), 1u);
  EXPECT_EQ(s.shapes[0].params.GetFloat("radius", 0), 4.0);
  EXPECT_EQ(s.shapes[0].loc.ToString(), dir_ + "/scene.pbrt.gz:2");
}

}  // namespace
}  // namespace tracer

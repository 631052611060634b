// @file portals_loader_test.cpp: where environment portals come from: OBJ objects and groups named portal... (taken
// out of the geometry, numbered as dropped, the same Scene from every parse and any number of threads, a clear error
// above the cap), pbrt-v4's infinite light's "portal" quad, and what the tracer says and shows: the summary, the
// warning without an environment, and the sky seen through a portal.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "env_test_scenes.h"
#include "loader_test_util.h"
#include "pbrt_loader_test_util.h"
#include "tracer/core/portals.h"
#include "tracer/host/image_io.h"

namespace tracer::test {
namespace {

// A unit square at height y as an OBJ quad of vertices base + 1 ... base + 4.
std::string Square(float y, int base) {
  const std::string h = std::to_string(y);
  return "v 0 " + h + " 0\nv 1 " + h + " 0\nv 1 " + h + " 1\nv 0 " + h + " 1\nf " + std::to_string(base + 1) + " " +
         std::to_string(base + 2) + " " + std::to_string(base + 3) + " " + std::to_string(base + 4) + "\n";
}

// Which names make portals: an o or g statement's first word starting with "portal" in any case, up to the next o or
// g statement (faces before any are geometry; as for tinyobjloader, a "g" with nothing after it on its line is no
// statement). The tinyobjloader parse reads the same from its shapes' names.
TEST_F(LoaderTest, ObjectsAndGroupsNamedPortalAreTakenOutOfTheGeometry) {
  const std::string obj = Square(0, 0) +                         // triangles 0 1: geometry
                          "o portal\n" + Square(1, 4) +          // 2 3: portal
                          "o room\n" + Square(2, 8) +            // 4 5: geometry
                          "g portal_east\n" + Square(3, 12) +    // 6 7: portal
                          "g wall\n" + Square(4, 16) +           // 8 9: geometry
                          "o Portal.001\n" + Square(5, 20) +     // 10 11: portal
                          "o myportal\n" + Square(6, 24) +       // 12 13: geometry
                          "g  PORTALS here\n" + Square(7, 28) +  // 14 15: portal
                          "g\n" + Square(9, 32) +                // 16 17: "g" alone is no statement: portal
                          "g \n" + Square(8, 36);                // 18 19: a group without a name: geometry
  const std::string path = Write("p.obj", obj);
  const Scene s = LoadScene(path);
  EXPECT_EQ(s.NumTriangles(), 10u);
  ASSERT_EQ(s.portals.size(), 3u * 10);
  const float heights[5] = {1, 3, 5, 7, 9};
  for (size_t k = 0; k < s.portals.size(); ++k) EXPECT_EQ(s.portals[k].y, heights[k / 6]) << "corner " << k;
  for (size_t k = 0; k < s.positions.size(); ++k) EXPECT_NE(int(s.positions[k].y) % 2, 1) << "corner " << k;
  EXPECT_EQ(s.droppedTriangles, 0u);
  EXPECT_EQ(s.triangleNumbers.dropped, (std::vector<int64_t>{2, 3, 6, 7, 10, 11, 14, 15, 16, 17}));
  EXPECT_NEAR(s.PortalArea(), 5.0, 1e-9);
  EXPECT_TRUE(Contains(s.Summary(), ", 10 portal triangles of area 5")) << s.Summary();
  LoadOptions naive;
  naive.tinyobjParse = true;
  ExpectSameScene(s, LoadScene(path, naive));
}

// A face named as a portal's but with a textured material (Minecraft exports its nether portals' blocks as
// "g Portal", textured) stays geometry, warned; an untextured one under such a name is a portal.
TEST_F(LoaderTest, TexturedFacesNamedPortalStayGeometry) {
  WriteGreyPng(dir_ + "/t.png", 128);
  Write("t.mtl", "newmtl Portal\nKd 1 1 1\nmap_Kd t.png\n");
  const std::string path = Write("mc.obj", "mtllib t.mtl\n" + Square(0, 0) + "o portal_window\n" + Square(2, 4) +
                                               "g Portal\nusemtl Portal\n" + Square(1, 8));
  const Scene s = LoadScene(path);
  EXPECT_EQ(s.NumTriangles(), 4u);
  ASSERT_EQ(s.portals.size(), 6u);
  EXPECT_EQ(s.portals[0].y, 2.0f);
  EXPECT_TRUE(HasWarning(s,
                         "2 triangles of objects or groups named portal... have a textured material (map_Kd): kept "
                         "as geometry"));
  LoadOptions naive;
  naive.tinyobjParse = true;
  ExpectSameScene(s, LoadScene(path, naive));
}

// A portal object whose faces come many pieces of the parallel parse after its o statement (80 KB of comments in
// between): each piece carries the state in which the one before it ended, and the Scene is the one of one pass and of
// tinyobjloader's parse.
TEST_F(LoaderTest, PortalStateCarriesAcrossParallelPieces) {
  std::string obj = Square(0, 0) + "o portal_big\n";
  for (int k = 0; k < 2000; ++k) obj += "# a comment of forty bytes, line " + std::to_string(100000 + k) + "\n";
  for (int k = 0; k < 60; ++k) obj += Square(1.0f + 0.001f * k, 4 + 4 * k);
  obj += "o rest\n";
  for (int k = 0; k < 1000; ++k) obj += Square(-1.0f - 0.001f * k, 244 + 4 * k);
  const std::string path = Write("big.obj", obj);
  LoadOptions one, many, naive;
  one.threads = 1;
  many.threads = 5;
  naive.tinyobjParse = true;
  const Scene a = LoadScene(path, one);
  EXPECT_EQ(a.portals.size(), 3u * 120);
  EXPECT_EQ(a.NumTriangles(), 2u * 1001);
  ExpectSameScene(a, LoadScene(path, many));
  ExpectSameScene(a, LoadScene(path, naive));
}

TEST_F(LoaderTest, MorePortalTrianglesThanTheCapFailNamingTheFile) {
  std::string obj = Square(0, 0) + "o portals\n";
  const int quads = kMaxPortalTriangles / 2 + 1;
  for (int k = 0; k < quads; ++k) obj += Square(1.0f + k, 4 + 4 * k);
  const std::string path = Write("many.obj", obj);
  const std::string error = LoadError(path);
  EXPECT_TRUE(Contains(error, path + ": " + std::to_string(2 * quads) + " portal triangles")) << error;
  EXPECT_TRUE(Contains(error, "at most 256")) << error;
  EXPECT_TRUE(Contains(LoadError(Write("only.obj", "o portal\n" + Square(0, 0))), "no triangles besides portals"));
}

// pbrt-v4's "point3 portal": four corners in world space (no CTM: the Translate before the light moves nothing), as
// two triangles that coincide with a mesh given the same corners (mirrored with it, where the loader mirrors). A
// portal of other than 4 points is left out with a warning.
TEST(PbrtPortals, InfiniteLightPortalIsParsed) {
  PbrtDir dir;
  const std::string corners = "0 5 0  2 5 0  2 5 1  0 5 1";
  const Scene s = dir.LoadWorld(
      "AttributeBegin\nTranslate 10 0 0\nLightSource \"infinite\" \"rgb L\" [1 1 1] \"point3 portal\" [" + corners +
      "]\nAttributeEnd\nShape \"trianglemesh\" \"point3 P\" [" + corners + "] \"integer indices\" [0 1 2 0 2 3]\n");
  ASSERT_EQ(s.portals.size(), 6u);
  ASSERT_EQ(s.NumTriangles(), 2u);
  for (size_t k = 0; k < 6; ++k) {
    bool found = false;  // the mirror may reverse a triangle's winding: look for the corner among the mesh's
    for (size_t j = 0; j < 6; ++j) found = found || static_cast<bool>(NearVec(s.portals[k], s.positions[j], 1e-6f));
    EXPECT_TRUE(found) << "portal corner " << k;
  }
  EXPECT_NEAR(s.PortalArea(), 2.0, 1e-6);
  EXPECT_FALSE(Contains(AllWarnings(s), "portal")) << AllWarnings(s);
  const Scene bad = dir.LoadLit("LightSource \"infinite\" \"rgb L\" [1 1 1] \"point3 portal\" [0 5 0 1 5 0 1 5 1]\n");
  EXPECT_TRUE(bad.portals.empty());
  EXPECT_EQ(CountWarnings(bad, "\"portal\" needs 4 finite points (12 numbers), not 9 numbers; ignored"), 1u)
      << AllWarnings(bad);
}

// An OBJ whose camera looks straight at a portal quad that fills the view, with the scene's one other triangle
// behind the camera: the image is the sky behind the portal in every pixel (a portal is not rendered), whatever the
// sampling.
TEST_F(LoaderTest, CameraLookingAtAPortalSeesTheSky) {
  const std::string path =
      Write("window.obj",
            "v -1 -1 5\nv 1 -1 5\nv 0 1 5\nf 1 2 3\no portal\nv -50 -50 -3\nv 50 -50 -3\nv 50 50 -3\n"
            "v -50 50 -3\nf 4 5 6 7\n");
  for (const char* sampling : {"portals", "importance"}) {
    const std::string out = dir_ + "/" + sampling + ".pfm";
    const CommandResult r = RunTracer(path +
                                      " --backend cpu --width 8 --height 8 --spp 2 --eye 0,0,0 --look-at 0,0,-1 "
                                      "--env 0.25,0.5,0.75 --env-sampling " +
                                      sampling + " -o " + out);
    ASSERT_EQ(r.exitCode, 0) << r.output;
    int w = 0, h = 0;
    const std::vector<float> rgb = ReadPfm(out, w, h);
    ASSERT_EQ(w * h, 64);
    for (size_t p = 0; p < rgb.size(); p += 3) {
      ASSERT_FLOAT_EQ(rgb[p], 0.25f) << sampling << " pixel " << p / 3;
      ASSERT_FLOAT_EQ(rgb[p + 1], 0.5f);
      ASSERT_FLOAT_EQ(rgb[p + 2], 0.75f);
    }
  }
}

// Portals without an environment do nothing, --env-sampling portals on a scene without them samples as importance, and
// auto gives them nothing under a sun: the tracer says so (and none of it is said when it is not so).
TEST_F(LoaderTest, PortalWarningsSayWhatPortalsCannotDo) {
  Write("m.mtl", "newmtl lamp\nKe 1 1 1\n");
  const std::string lit = Write("lit.obj", "mtllib m.mtl\nusemtl lamp\n" + Square(0, 0) + "o portal\n" + Square(2, 4));
  const std::string args =
      " --backend cpu --width 4 --height 4 --spp 1 --eye 0.5,3,2 --look-at 0.5,0,0.5 -o " + dir_ + "/x.png";
  const CommandResult dark = RunTracer(lit + args);
  ASSERT_EQ(dark.exitCode, 0) << dark.output;
  EXPECT_TRUE(Contains(dark.output, "lit.obj: 2 portal triangles but no environment (--env R,G,B or --env-map FILE)"))
      << dark.output;
  const CommandResult sky = RunTracer(lit + args + " --env 1,1,1");
  EXPECT_FALSE(Contains(sky.output, "portal")) << sky.output;
  const std::string plain = Write("plain.obj", "mtllib m.mtl\nusemtl lamp\n" + Square(0, 0));
  const CommandResult asked = RunTracer(plain + args + " --env 1,1,1 --env-sampling portals");
  EXPECT_TRUE(Contains(asked.output, "--env-sampling portals: " + plain + " has no portals")) << asked.output;
  EXPECT_FALSE(Contains(RunTracer(plain + args + " --env 1,1,1").output, "portal"));
  // Under a sun-dominated map --env-portal-mix auto gives the portals nothing, and the tracer notes it.
  ASSERT_TRUE(WriteHdrFile(dir_ + "/sun.hdr", SkyWithSun(64, 32, 40, 8, 2000.0f)));
  const CommandResult sun = RunTracer(lit + args + " --env-map " + dir_ + "/sun.hdr");
  EXPECT_TRUE(Contains(sun.output, "--env-portal-mix auto gives the portals no samples")) << sun.output;
  EXPECT_FALSE(
      Contains(RunTracer(lit + args + " --env-map " + dir_ + "/sun.hdr --env-portal-mix 0.5").output, "no samples"));
}

}  // namespace
}  // namespace tracer::test

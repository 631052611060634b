// @file pbrt_parser_test.cpp: the pbrt-v4 parser on snippets: every directive of the options block and the world,
// every parameter type, attribute defaults, named materials, textures, lights, media, the graphics state stack, and
// the errors (each with file and line) for what is malformed or out of place.
#include <gtest/gtest.h>

#include "pbrt_test_util.h"

namespace tracer {
namespace {

using test::Contains;
using test::ParsePbrt;
using test::ParseWorld;
using test::PbrtErrorOf;

TEST(PbrtParser, OptionsBlock) {
  PbrtScene s = ParsePbrt(
      "Option \"disablepixeljitter\" true\n"
      "ColorSpace \"rec2020\"\n"
      "Film \"rgb\" \"integer xresolution\" [ 640 ] \"integer yresolution\" 480\n"
      "  \"string filename\" \"out.exr\"\n"
      "Sampler \"halton\" \"integer pixelsamples\" 16\n"
      "Integrator \"path\" \"integer maxdepth\" [ 7 ]\n"
      "PixelFilter \"box\"\n"
      "Accelerator \"kdtree\"\n"
      "TransformTimes 0 2\n"
      "Camera \"orthographic\" \"float screenwindow\" [ -1 1 -1 1 ]\n"
      "WorldBegin\n");
  EXPECT_EQ(s.film.type, "rgb");
  EXPECT_EQ(s.film.params.GetInt("xresolution", 0), 640);
  EXPECT_EQ(s.film.params.GetInt("yresolution", 0), 480);
  EXPECT_EQ(s.film.params.GetString("filename", ""), "out.exr");
  EXPECT_EQ(s.film.loc.ToString(), "s.pbrt:3");
  EXPECT_EQ(s.film.colorSpace, "rec2020");
  EXPECT_EQ(s.sampler.type, "halton");
  EXPECT_EQ(s.sampler.params.GetInt("pixelsamples", 0), 16);
  EXPECT_EQ(s.integrator.type, "path");
  EXPECT_EQ(s.integrator.params.GetInt("maxdepth", 0), 7);
  EXPECT_EQ(s.filter.type, "box");
  EXPECT_EQ(s.accelerator.type, "kdtree");
  EXPECT_EQ(s.camera.type, "orthographic");
  EXPECT_EQ(s.camera.params.GetFloats("screenwindow"), (std::vector<double>{-1, 1, -1, 1}));
  EXPECT_EQ(s.camera.loc.line, 10);
  EXPECT_EQ(s.transformStartTime, 0.0);
  EXPECT_EQ(s.transformEndTime, 2.0);
  ASSERT_EQ(s.options.size(), 1u);
  EXPECT_EQ(s.options[0].name, "disablepixeljitter");
  EXPECT_EQ(s.options[0].value, "true");
  EXPECT_EQ(s.options[0].loc.line, 1);
  EXPECT_TRUE(s.warnings.empty());
}

TEST(PbrtParser, DefaultsWhenTheFileSaysNothing) {
  PbrtScene s = ParsePbrt("WorldBegin");
  // pbrt-v4's defaults (BasicSceneBuilder's constructor).
  EXPECT_EQ(s.camera.type, "perspective");
  EXPECT_EQ(s.film.type, "rgb");
  EXPECT_EQ(s.sampler.type, "zsobol");
  EXPECT_EQ(s.integrator.type, "volpath");
  EXPECT_EQ(s.filter.type, "gaussian");
  EXPECT_EQ(s.accelerator.type, "bvh");
  EXPECT_FALSE(s.camera.loc.Known());
  EXPECT_EQ(s.camera.loc.ToString(), "<default>");
  ASSERT_EQ(s.materials.size(), 1u);
  EXPECT_EQ(s.materials[0].type, "diffuse");
  EXPECT_TRUE(s.camera.cameraFromWorld.IsIdentity());
}

TEST(PbrtParser, EveryParameterType) {
  PbrtScene s = ParseWorld(
      "Shape \"x\" \"integer i\" [ 1 -2 ] \"float f\" 0.5 \"point2 p2\" [ 1 2 ] \"vector2 v2\" [ 3 4 ]\n"
      "  \"point3 p3\" [ 1 2 3 ] \"vector3 v3\" [ 4 5 6 ] \"normal3 n3\" [ 0 0 1 ] \"normal n\" [ 0 1 0 ]\n"
      "  \"point p\" [ 7 8 9 ] \"vector v\" [ 1 0 0 ] \"spectrum s\" [ 400 0.5 700 0.25 ] \"spectrum sn\" "
      "\"metal-Cu-eta\"\n"
      "  \"rgb c\" [ 0.1 0.2 0.3 ] \"blackbody bb\" 6500 \"bool b\" [ true false ] \"bool q\" \"true\"\n"
      "  \"string str\" [ \"a\" \"b\" ] \"texture t\" \"checks\"\n");
  ASSERT_EQ(s.shapes.size(), 1u);
  const PbrtParams& p = s.shapes[0].params;
  ASSERT_EQ(p.list.size(), 18u);
  auto type = [&](const char* name) { return p.Find(name)->type; };
  EXPECT_EQ(p.GetInts("i"), (std::vector<int32_t>{1, -2}));
  EXPECT_EQ(type("i"), PbrtParamType::kInteger);
  EXPECT_EQ(p.GetFloat("f", 0), 0.5);
  EXPECT_EQ(type("p2"), PbrtParamType::kPoint2);
  EXPECT_EQ(p.GetFloats("p2"), (std::vector<double>{1, 2}));
  EXPECT_EQ(type("v2"), PbrtParamType::kVector2);
  EXPECT_EQ(type("p3"), PbrtParamType::kPoint3);
  EXPECT_EQ(p.Find("p3")->Count(), 1u);
  EXPECT_EQ(type("v3"), PbrtParamType::kVector3);
  EXPECT_EQ(type("n3"), PbrtParamType::kNormal3);
  EXPECT_EQ(type("n"), PbrtParamType::kNormal3);
  EXPECT_EQ(type("p"), PbrtParamType::kPoint3);
  EXPECT_EQ(p.GetFloats("p"), (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(type("v"), PbrtParamType::kVector3);
  EXPECT_EQ(type("s"), PbrtParamType::kSpectrum);
  EXPECT_EQ(p.Find("s")->Count(), 2u);
  EXPECT_EQ(p.Find("sn")->strings, (std::vector<std::string>{"metal-Cu-eta"}));
  EXPECT_EQ(type("c"), PbrtParamType::kRgb);
  EXPECT_EQ(p.GetFloats("c"), (std::vector<double>{0.1, 0.2, 0.3}));
  EXPECT_EQ(type("bb"), PbrtParamType::kBlackbody);
  EXPECT_EQ(p.GetFloats("bb"), (std::vector<double>{6500}));
  EXPECT_EQ(p.Find("b")->bools, (std::vector<bool>{true, false}));
  EXPECT_TRUE(p.GetBool("q", false));
  EXPECT_EQ(p.Find("str")->strings, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.GetString("str", ""), "a");
  EXPECT_EQ(type("t"), PbrtParamType::kTexture);
  EXPECT_EQ(p.Find("t")->strings[0], "checks");
  EXPECT_EQ(p.Find("t")->loc.line, 6);
  EXPECT_STREQ(PbrtParamTypeName(type("n")), "normal3");
  // Look-ups by name and type: a float looked up as an integer is not there.
  EXPECT_EQ(p.GetInt("f", -7), -7);
  EXPECT_EQ(p.Find("f", PbrtParamType::kInteger), nullptr);
}

TEST(PbrtParser, OldColorTypeReadsAsRgbWithAWarning) {
  PbrtScene s = ParseWorld("Material \"diffuse\" \"color reflectance\" [ 0.5 0.5 0.5 ]\n");
  EXPECT_EQ(s.materials.back().params.Find("reflectance")->type, PbrtParamType::kRgb);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_TRUE(Contains(s.warnings[0], "s.pbrt:2: the parameter type \"color\""));
}

TEST(PbrtParser, LaterDuplicateParameterWins) {
  // pbrt-v4 looks parameters up from the end of the list.
  PbrtScene s = ParseWorld("Shape \"sphere\" \"float radius\" 1 \"float radius\" 3\n");
  EXPECT_EQ(s.shapes[0].params.GetFloat("radius", 0), 3.0);
}

TEST(PbrtParser, ParameterErrorsNameFileAndLine) {
  const std::string w = "WorldBegin\n";
  const std::pair<std::string, std::string> kCases[] = {
      {w + "Shape \"x\"\n \"point3 P\" [ 1 2 3 4 ]",
       "s.pbrt:3: \"point3 P\": 4 values, not a multiple of the 3 of a point3"},
      {w + "Shape \"x\" \"rgb c\" [ 1 1 ]", "s.pbrt:2: \"rgb c\": 2 values, not a multiple of the 3 of a rgb"},
      {w + "Shape \"x\" \"vector2 v\" [ 1 2 3 ]",
       "s.pbrt:2: \"vector2 v\": 3 values, not a multiple of the 2 of a vector2"},
      {w + "Shape \"x\" \"quaternion q\" [ 1 ]", "s.pbrt:2: \"quaternion q\": unknown parameter type \"quaternion\""},
      {w + "Shape \"x\" \"integer n\" [ 1\n 2.5 ]",
       "s.pbrt:3: \"integer n\": expected an integer, found the number 2.5"},
      {w + "Shape \"x\" \"integer n\" 3000000000", "s.pbrt:2: \"integer n\": 3000000000 does not fit in 32 bits"},
      {w + "Shape \"x\" \"float f\" \"one\"", "s.pbrt:2: \"float f\": expected a number, found the string \"one\""},
      {w + "Shape \"x\" \"string s\" 1", "s.pbrt:2: \"string s\": expected a quoted string, found the number 1"},
      {w + "Shape \"x\" \"bool b\" 1", "s.pbrt:2: \"bool b\": expected true or false, found the number 1"},
      {w + "Shape \"x\" \"texture t\" [ \"a\" \"b\" ]",
       "s.pbrt:2: \"texture t\": a texture parameter names one texture"},
      {w + "Shape \"x\" \"spectrum s\" [ 400 1 500 ]",
       "s.pbrt:2: \"spectrum s\": a spectrum's numbers come in (wavelength, value) pairs"},
      {w + "Shape \"x\" \"spectrum s\" [ 500 1 400 1 ]", "s.pbrt:2: \"spectrum s\": the wavelengths do not increase"},
      {w + "Shape \"x\" \"spectrum s\" [ 400 \"a\" ]",
       "s.pbrt:2: \"spectrum s\": expected (wavelength, value) numbers or one name, found the string \"a\""},
      {w + "Shape \"x\" \"rgb c\" [ 1 -1 0 ]", "s.pbrt:2: \"rgb c\": an rgb value is negative"},
      {w + "Shape \"x\" \"float f\" [ ]", "s.pbrt:2: \"float f\": no values"},
      {w + "Shape \"x\" \"float f\" [ 1 2\nShape \"y\"",
       "s.pbrt:3: \"float f\": the '[' at line 2 is not closed before the word Shape"},
      {w + "Shape \"x\" \"float f\"", "s.pbrt:2: \"float f\": expected a value or '[', found the end of the file"},
      {w + "Shape \"x\" \"radius\" 1", "s.pbrt:2: \"radius\" is not a parameter declaration \"type name\""},
      {w + "Shape \"x\" \"float radius big\" 1",
       "s.pbrt:2: \"float radius big\" is not a parameter declaration \"type name\""},
  };
  for (const auto& [text, message] : kCases) EXPECT_EQ(PbrtErrorOf(text), message) << text;
}

TEST(PbrtParser, DirectiveErrorsNameFileAndLine) {
  const std::pair<std::string, std::string> kCases[] = {
      {"WorldBegin\n\nShapes \"sphere\"", "s.pbrt:3: unknown directive \"Shapes\""},
      {"WorldBegin\n12", "s.pbrt:2: expected a directive, found the number 12"},
      {"Shape \"sphere\"", "s.pbrt:1: Shape describes the world: it must come after WorldBegin"},
      {"WorldBegin\nCamera \"perspective\"", "s.pbrt:2: Camera is an option: it must come before WorldBegin"},
      {"WorldBegin\nWorldBegin", "s.pbrt:2: a second WorldBegin"},
      {"Film \"rgb\"\n", "s.pbrt:2: the scene ends before WorldBegin"},
      {"WorldBegin\nShape sphere", "s.pbrt:2: Shape: expected a type in quotes, found the word sphere"},
      {"Translate 1 2", "s.pbrt:1: Translate: expected a number, found the end of the file"},
      {"WorldBegin\nAttributeEnd", "s.pbrt:2: AttributeEnd without a matching AttributeBegin"},
      {"WorldBegin\nAttributeBegin\nAttributeBegin\nAttributeEnd\n",
       "s.pbrt:2: AttributeBegin is not closed before the end of the scene"},
      {"ActiveTransform Sometimes", "s.pbrt:1: ActiveTransform takes All, StartTime or EndTime, not \"Sometimes\""},
      {"Option \"seed\" [", "s.pbrt:1: Option \"seed\": expected a value, found '['"},
      {"WorldBegin\nAttribute \"camera\" \"float f\" 1",
       "s.pbrt:2: Attribute: unknown target \"camera\" (it must be \"shape\", \"light\", \"material\", \"medium\" "
       "or \"texture\")"},
      {"TransformTimes 1 0", "s.pbrt:1: TransformTimes: the end time comes before the start time"},
  };
  for (const auto& [text, message] : kCases) EXPECT_EQ(PbrtErrorOf(text), message) << text;
}

TEST(PbrtParser, AttributeDefaults) {
  PbrtScene s = ParseWorld(
      "AttributeBegin\n"
      "  Attribute \"shape\" \"float radius\" 2 \"float zmax\" 0.5\n"
      "  Attribute \"light\" \"float scale\" 3\n"
      "  Attribute \"material\" \"float roughness\" 0.25\n"
      "  Shape \"sphere\"\n"
      "  Shape \"sphere\" \"float radius\" 5\n"
      "  LightSource \"point\"\n"
      "  Material \"conductor\"\n"
      "AttributeEnd\n"
      "Shape \"sphere\"\n");
  ASSERT_EQ(s.shapes.size(), 3u);
  EXPECT_EQ(s.shapes[0].params.GetFloat("radius", 1), 2.0);
  EXPECT_TRUE(s.shapes[0].params.Find("radius")->fromAttribute);
  EXPECT_EQ(s.shapes[0].params.GetFloat("zmax", 1), 0.5);
  EXPECT_EQ(s.shapes[1].params.GetFloat("radius", 1), 5.0);  // its own parameter first
  EXPECT_FALSE(s.shapes[1].params.Find("radius")->fromAttribute);
  EXPECT_EQ(s.shapes[2].params.GetFloat("radius", 1), 1.0);  // the defaults ended with AttributeEnd
  EXPECT_EQ(s.lights[0].params.GetFloat("scale", 1), 3.0);
  EXPECT_EQ(s.materials.back().params.GetFloat("roughness", 0), 0.25);
}

TEST(PbrtParser, MaterialsAnonymousAndNamed) {
  PbrtScene s = ParseWorld(
      "Shape \"sphere\"\n"                                                              // 2: the default material
      "Material \"conductor\" \"spectrum eta\" \"metal-Au-eta\"\n"                      // 3
      "Shape \"sphere\"\n"                                                              // 4
      "NamedMaterial \"glass\"\n"                                                       // 5: defined below
      "Shape \"sphere\"\n"                                                              // 6
      "MakeNamedMaterial \"glass\" \"string type\" \"dielectric\" \"float eta\" 1.5\n"  // 7
      "MakeNamedMaterial \"red\" \"string type\" [ \"diffuse\" ] \"rgb reflectance\" [ 0.8 0 0 ]\n"
      "NamedMaterial \"red\"\n"
      "Shape \"sphere\"\n"
      "Material \"coateddiffuse\"\n"
      "Shape \"sphere\"\n");
  ASSERT_EQ(s.shapes.size(), 5u);
  ASSERT_EQ(s.materials.size(), 5u);
  EXPECT_EQ(s.shapes[0].material, 0);
  EXPECT_EQ(s.materials[1].type, "conductor");
  EXPECT_EQ(s.materials[1].name, "");
  EXPECT_EQ(s.shapes[1].material, 1);
  const int glass = s.namedMaterials.at("glass");
  EXPECT_EQ(s.materials[glass].type, "dielectric");
  EXPECT_EQ(s.materials[glass].name, "glass");
  EXPECT_EQ(s.materials[glass].params.GetFloat("eta", 0), 1.5);
  EXPECT_EQ(s.materials[glass].loc.line, 7);
  EXPECT_EQ(s.shapes[2].material, glass);
  EXPECT_EQ(s.materials[s.shapes[3].material].name, "red");
  EXPECT_EQ(s.materials[s.shapes[4].material].type, "coateddiffuse");
}

TEST(PbrtParser, MaterialErrors) {
  const std::pair<std::string, std::string> kCases[] = {
      {"WorldBegin\nNamedMaterial \"nope\"\nShape \"sphere\"\n",
       "s.pbrt:2: NamedMaterial \"nope\": no MakeNamedMaterial defines it (the Shape at s.pbrt:3 uses it)"},
      {"WorldBegin\nMakeNamedMaterial \"m\" \"string type\" \"diffuse\"\nMakeNamedMaterial \"m\" "
       "\"string type\" \"diffuse\"",
       "s.pbrt:3: MakeNamedMaterial: \"m\" is already defined at s.pbrt:2"},
      {"WorldBegin\nMakeNamedMaterial \"m\" \"float eta\" 1.5",
       "s.pbrt:2: MakeNamedMaterial \"m\" has no \"string type\" parameter"},
  };
  for (const auto& [text, message] : kCases) EXPECT_EQ(PbrtErrorOf(text), message) << text;
  // A NamedMaterial that no shape uses is not an error (pbrt-v4 looks names up when shapes are created).
  EXPECT_EQ(PbrtErrorOf("WorldBegin\nNamedMaterial \"unused\"\n"), "");
}

TEST(PbrtParser, Textures) {
  PbrtScene s = ParseWorld(
      "Translate 1 2 3\n"
      "Texture \"checks\" \"spectrum\" \"checkerboard\" \"float uscale\" 8 \"rgb tex1\" [ 1 0 0 ]\n"
      "Texture \"bump\" \"float\" \"imagemap\" \"string filename\" \"b.png\"\n"
      "Texture \"checks\" \"float\" \"constant\" \"float value\" 0.5\n"
      "Material \"diffuse\" \"texture reflectance\" \"checks\"\n");
  ASSERT_EQ(s.textures.size(), 3u);
  const PbrtTexture* checks = s.FindTexture("checks", false);
  ASSERT_NE(checks, nullptr);
  EXPECT_EQ(checks->type, "checkerboard");
  EXPECT_FALSE(checks->isFloat);
  EXPECT_EQ(checks->params.GetFloat("uscale", 0), 8.0);
  EXPECT_EQ(checks->objectToWorld.m[0][3], 1.0);
  EXPECT_EQ(checks->loc.line, 3);
  const PbrtTexture* bump = s.FindTexture("bump", true);
  ASSERT_NE(bump, nullptr);
  EXPECT_EQ(bump->params.GetString("filename", ""), "b.png");
  // A float and a spectrum texture may share a name.
  ASSERT_NE(s.FindTexture("checks", true), nullptr);
  EXPECT_EQ(s.FindTexture("checks", true)->type, "constant");
  EXPECT_EQ(s.FindTexture("bump", false), nullptr);
  EXPECT_EQ(s.materials.back().params.Find("reflectance")->strings[0], "checks");

  EXPECT_EQ(PbrtErrorOf("WorldBegin\nTexture \"t\" \"vector\" \"constant\""),
            "s.pbrt:2: Texture \"t\": unknown type \"vector\" (\"float\" or \"spectrum\")");
  EXPECT_EQ(PbrtErrorOf("WorldBegin\nTexture \"t\" \"float\" \"constant\"\nTexture \"t\" \"float\" \"constant\""),
            "s.pbrt:3: Texture \"t\" is already defined at s.pbrt:2");
  PbrtScene old = ParseWorld("Texture \"t\" \"color\" \"constant\"\n");
  EXPECT_FALSE(old.textures[0].isFloat);
  EXPECT_EQ(old.warnings.size(), 1u);
}

TEST(PbrtParser, LightsAndAreaLights) {
  PbrtScene s = ParseWorld(
      "LightSource \"distant\" \"point3 from\" [ 0 0 0 ] \"point3 to\" [ 0 0 1 ] \"blackbody L\" 5500\n"
      "AttributeBegin\n"
      "  Translate 0 5 0\n"
      "  AreaLightSource \"diffuse\" \"rgb L\" [ 10 10 10 ] \"bool twosided\" true\n"
      "  Shape \"sphere\" \"float radius\" 0.5\n"
      "  Shape \"disk\"\n"
      "  LightSource \"point\" \"rgb I\" [ 1 2 3 ]\n"
      "AttributeEnd\n"
      "Shape \"sphere\"\n");
  ASSERT_EQ(s.lights.size(), 2u);
  EXPECT_EQ(s.lights[0].type, "distant");
  EXPECT_EQ(s.lights[0].params.Find("L")->type, PbrtParamType::kBlackbody);
  EXPECT_EQ(s.lights[1].type, "point");
  EXPECT_EQ(s.lights[1].objectToWorld.ApplyPoint({0, 0, 0})[1], 5.0);
  ASSERT_EQ(s.areaLights.size(), 1u);
  EXPECT_EQ(s.areaLights[0].type, "diffuse");
  EXPECT_EQ(s.areaLights[0].params.GetFloats("L"), (std::vector<double>{10, 10, 10}));
  EXPECT_TRUE(s.areaLights[0].params.GetBool("twosided", false));
  EXPECT_EQ(s.areaLights[0].loc.line, 5);
  ASSERT_EQ(s.shapes.size(), 3u);
  EXPECT_EQ(s.shapes[0].areaLight, 0);
  EXPECT_EQ(s.shapes[1].areaLight, 0);
  EXPECT_EQ(s.shapes[2].areaLight, -1);  // AttributeEnd ended the area light
}

TEST(PbrtParser, Media) {
  PbrtScene s = ParsePbrt(
      "MakeNamedMedium \"fog\" \"string type\" \"homogeneous\" \"rgb sigma_a\" [ 0.1 0.1 0.1 ]\n"
      "MediumInterface \"\" \"fog\"\n"
      "Camera \"perspective\"\n"
      "WorldBegin\n"
      "MakeNamedMedium \"ink\" \"string type\" \"uniformgrid\" \"float scale\" 2\n"
      "MediumInterface \"ink\"\n"
      "Shape \"sphere\"\n"
      "MediumInterface \"ink\" \"fog\"\n"
      "Shape \"sphere\"\n"
      "LightSource \"point\"\n");
  ASSERT_EQ(s.media.size(), 2u);
  EXPECT_EQ(s.FindMedium("fog")->type, "homogeneous");
  EXPECT_EQ(s.FindMedium("ink")->params.GetFloat("scale", 0), 2.0);
  EXPECT_EQ(s.FindMedium("ink")->loc.line, 5);
  EXPECT_EQ(s.FindMedium("smoke"), nullptr);
  EXPECT_EQ(s.camera.medium, "fog");
  EXPECT_EQ(s.shapes[0].insideMedium, "ink");
  EXPECT_EQ(s.shapes[0].outsideMedium, "ink");  // one name is both sides
  EXPECT_EQ(s.shapes[1].insideMedium, "ink");
  EXPECT_EQ(s.shapes[1].outsideMedium, "fog");
  EXPECT_EQ(s.lights[0].medium, "fog");
  EXPECT_EQ(PbrtErrorOf("MakeNamedMedium \"m\" \"float scale\" 1\nWorldBegin"),
            "s.pbrt:1: MakeNamedMedium \"m\" has no \"string type\" parameter");
  EXPECT_EQ(PbrtErrorOf("MakeNamedMedium \"m\" \"string type\" \"homogeneous\"\nMakeNamedMedium \"m\" \"string type\" "
                        "\"homogeneous\""),
            "s.pbrt:2: MakeNamedMedium: \"m\" is already defined at s.pbrt:1");
}

TEST(PbrtParser, AttributeBlocksRestoreTheGraphicsState) {
  PbrtScene s = ParseWorld(
      "Material \"conductor\"\n"
      "AttributeBegin\n"
      "  Translate 1 0 0\n"
      "  ReverseOrientation\n"
      "  Material \"dielectric\"\n"
      "  MediumInterface \"a\" \"b\"\n"
      "  Shape \"sphere\"\n"
      "  AttributeBegin\n"
      "    Scale 2 2 2\n"
      "    ReverseOrientation\n"
      "    Shape \"sphere\"\n"
      "  AttributeEnd\n"
      "  Shape \"sphere\"\n"
      "AttributeEnd\n"
      "Shape \"sphere\"\n");
  ASSERT_EQ(s.shapes.size(), 4u);
  EXPECT_EQ(s.shapes[0].objectToWorld, PbrtTransform::Translate(1, 0, 0));
  EXPECT_TRUE(s.shapes[0].reverseOrientation);
  EXPECT_EQ(s.materials[s.shapes[0].material].type, "dielectric");
  EXPECT_EQ(s.shapes[1].objectToWorld, PbrtTransform::Translate(1, 0, 0) * PbrtTransform::Scale(2, 2, 2));
  EXPECT_FALSE(s.shapes[1].reverseOrientation);  // toggled twice
  EXPECT_EQ(s.shapes[2].objectToWorld, PbrtTransform::Translate(1, 0, 0));
  EXPECT_TRUE(s.shapes[2].reverseOrientation);
  EXPECT_TRUE(s.shapes[3].objectToWorld.IsIdentity());
  EXPECT_FALSE(s.shapes[3].reverseOrientation);
  EXPECT_EQ(s.materials[s.shapes[3].material].type, "conductor");
  EXPECT_EQ(s.shapes[3].insideMedium, "");
}

TEST(PbrtParser, TransformBeginAndWorldEndAreReadWithWarnings) {
  PbrtScene s = ParseWorld(
      "TransformBegin\n"
      "  Translate 0 1 0\n"
      "  Shape \"sphere\"\n"
      "TransformEnd\n"
      "TransformBegin\n"
      "TransformEnd\n"
      "Shape \"sphere\"\n"
      "WorldEnd\n");
  EXPECT_EQ(s.shapes[0].objectToWorld, PbrtTransform::Translate(0, 1, 0));
  EXPECT_TRUE(s.shapes[1].objectToWorld.IsIdentity());
  ASSERT_EQ(s.warnings.size(), 2u);  // each kind once
  EXPECT_TRUE(Contains(s.warnings[0], "s.pbrt:2: TransformBegin/TransformEnd are deprecated"));
  EXPECT_TRUE(Contains(s.warnings[1], "s.pbrt:9: WorldEnd"));
}

TEST(PbrtParser, DirectiveUsesAreCountedWithTheFirstPlace) {
  PbrtScene s = ParseWorld("Shape \"sphere\"\nReverseOrientation\nShape \"disk\"\n");
  EXPECT_EQ(s.directives.at("Shape").count, 2u);
  EXPECT_EQ(s.directives.at("Shape").first.ToString(), "s.pbrt:2");
  EXPECT_EQ(s.directives.at("ReverseOrientation").count, 1u);
  EXPECT_EQ(s.directives.at("WorldBegin").first.line, 1);
  EXPECT_EQ(s.directives.count("Camera"), 0u);
  EXPECT_TRUE(Contains(s.Summary(), "2 shapes"));
}

TEST(PbrtParser, ColorSpaceAppliesToLaterDirectives) {
  PbrtScene s =
      ParseWorld("Material \"diffuse\"\nColorSpace \"aces2065-1\"\nMaterial \"diffuse\"\nColorSpace \"p3\"\n");
  EXPECT_EQ(s.materials[1].colorSpace, "srgb");
  EXPECT_EQ(s.materials[2].colorSpace, "aces2065-1");
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_TRUE(Contains(s.warnings[0], "s.pbrt:5: ColorSpace: unknown color space \"p3\""));
}

}  // namespace
}  // namespace tracer

// @file render_gpu_test.cu: the CUDA renderer against the CPU reference (label "gpu"; skips without a device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "cutout_scenes.h"
#include "env_light_checks.h"
#include "env_test_scenes.h"
#include "gpu_test_util.h"
#include "image_compare.h"
#include "normal_map_scenes.h"
#include "test_util.h"
#include "tracer/host/aov.h"
#include "tracer/host/backends.h"
#include "tracer/host/bvh_build_gpu.h"
#include "tracer/host/image_io.h"
#include "tracer/host/make_rays.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/tile_guide.h"

using namespace tracer;

namespace {

SceneData Data(const std::string& path, int w, int h, BvhBuilderFn builder = nullptr, Vec3 environment = Vec3(0.0f)) {
  Scene scene = LoadScene(path);
  Camera cam;
  if (scene.camera.valid) {
    cam = Camera::LookAt(scene.camera.eye, scene.camera.lookAt, scene.camera.up, scene.camera.fovY, w, h);
  } else {  // McGuire's boxes: camera in front of the opening, as in their README
    cam = Camera::LookAt(Vec3(0.0f, 1.0f, 3.4f), Vec3(0.0f, 1.0f, 0.0f), Vec3(0, 1, 0), 39.3f, w, h);
  }
  BvhBuildOptions bvhOptions;
  bvhOptions.builder = builder;
  return BuildSceneData(scene, cam, environment, bvhOptions);
}

// A project scene with its emitters clustered (at most 64 clusters), and the options of a w x h tile-guided
// render at spp; with a constant environment when one is given.
struct TileCase {
  SceneData data;
  RenderOptions opt;
};
TileCase TileRender(const std::string& file, int w, int h, int spp, Vec3 environment = Vec3(0.0f)) {
  TileCase c{Data(test::ProjectScenesDir() + "/" + file, w, h, nullptr, environment), RenderOptions{}};
  BuildLightClusters(c.data, 64);
  c.opt.width = w;
  c.opt.height = h;
  c.opt.spp = spp;
  c.opt.lightSampling = LightSampling::kTiles;
  return c;
}

// GPU and CPU images agree block by block (16x16 pixels) within 4 standard errors, and are finite.
// The standard errors come from 8 independent seeds per renderer, so each block's z is roughly Student-t
// with ~14 degrees of freedom: 4 is then a ~0.1% per-block false alarm. At 128 spp a 3% bias in the GPU's
// emission term alone fails (checked on an H200: at 32 spp it passed with z = 3.4, at 1024 spp the mean
// test below caught it).
// gpuBuilder: the GPU renders the scene with BVHs from the GPU builder (and its triangle order), the CPU with the
// host-built ones.
// lens > 0: a thin-lens camera of that radius, as a fraction of the focus distance (the look-at point's).
void ExpectDataAgreement(const std::string& name, const SceneData& data, const SceneData& gpuData, int spp,
                         bool binaryBvh = false, int maxDepth = 8) {
  const int w = data.camera.width, h = data.camera.height, seeds = 8;
  RenderOptions opt = test::QuietRender(w, h, spp, maxDepth);
  opt.binaryBvh = binaryBvh;
  auto cpu = test::RenderBlocks(
      [&](unsigned s) {
        RenderOptions o = opt;
        o.seed = s;
        return RenderCpu(data, o).rgb;
      },
      seeds, w, h, 16);
  // Other seeds than the CPU's: the two renderers draw the same random numbers for the same seed, and the
  // comparison must be between independent estimates.
  auto gpu = test::RenderBlocks(
      [&](unsigned s) {
        RenderOptions o = opt;
        o.seed = s + 1000u;
        return RenderCuda(gpuData, o).rgb;
      },
      seeds, w, h, 16);
  size_t worst = 0;
  double z = test::MaxBlockZ(cpu, gpu, &worst);
  std::printf("%s: max block z = %.2f (block %zu: cpu %.4f +- %.4f, gpu %.4f +- %.4f)\n", name.c_str(), z, worst,
              cpu.mean[worst], cpu.standardError[worst], gpu.mean[worst], gpu.standardError[worst]);
  EXPECT_TRUE(cpu.allFinite);
  EXPECT_TRUE(gpu.allFinite);
  EXPECT_LT(z, 4.0);
}

void ExpectAgreement(const std::string& path, int spp, bool gpuBuilder = false, float lens = 0.0f) {
  const int w = 64, h = 64;
  SceneData data = Data(path, w, h);
  data.camera.lensRadius = lens * data.camera.focusDistance;
  if (!gpuBuilder) {
    ExpectDataAgreement(path, data, data, spp);
    return;
  }
  SceneData gpuData = Data(path, w, h, &BuildBvhsOnGpu);
  gpuData.camera.lensRadius = data.camera.lensRadius;
  EXPECT_EQ(gpuData.bvhReport.builder, "gpu") << gpuData.bvhReport.note;
  ExpectDataAgreement(path, data, gpuData, spp);
}

}  // namespace

TEST(GpuAgreement, CornellBox) {
  TRACER_REQUIRE_GPU();
  ExpectAgreement(test::ProjectScenesDir() + "/cornell.obj", 128);
}
TEST(GpuAgreement, CornellBoxWithGpuBuiltBvh) {
  TRACER_REQUIRE_GPU();
  ExpectAgreement(test::ProjectScenesDir() + "/cornell.obj", 128, true);
}
TEST(GpuAgreement, SphereBoxWithGpuBuiltBvh) {
  TRACER_REQUIRE_GPU();
  TRACER_SHARED_SCENE_OR_SKIP(path, "cornellbox/CornellBox-Sphere.obj");
  ExpectAgreement(path, 128, true);
}
// The thin lens is per-ray code that both renderers run: the blurred images agree too.
TEST(GpuAgreement, CornellBoxThroughAThinLens) {
  TRACER_REQUIRE_GPU();
  ExpectAgreement(test::ProjectScenesDir() + "/cornell.obj", 128, false, 0.05f);
}
TEST(GpuAgreement, SphereBox) {
  TRACER_REQUIRE_GPU();
  TRACER_SHARED_SCENE_OR_SKIP(path, "cornellbox/CornellBox-Sphere.obj");
  ExpectAgreement(path, 128);
}
TEST(GpuAgreement, WaterBox) {
  TRACER_REQUIRE_GPU();
  TRACER_SHARED_SCENE_OR_SKIP(path, "cornellbox/CornellBox-Water.obj");
  ExpectAgreement(path, 128);
}

// A turned diffuse cube on a floor under a sky with a small bright sun (an environment map, turned by 23 degrees):
// next-event estimation of the map and its MIS against BSDF sampling, on both renderers; and the Cornell box lit
// through its open side by a constant --env as well as its ceiling light (the environment's share of selection).
TEST(GpuAgreement, SunAndSkyEnvironmentMap) {
  TRACER_REQUIRE_GPU();
  const std::string dir = test::MakeTempDir();
  test::WriteFloorScene(dir, 0.6f);
  const std::string cube = test::WriteCubeScene(dir, "cube", 0.5f, Vec3(1, 2, 3), 0.7f);
  // One OBJ with both: the cube's, then the floor lowered to below the cube's lowest corner (vertices 9 to 12),
  // with one MTL holding both materials.
  test::WriteFile(dir + "/both.mtl", test::ReadFile(dir + "/floor.mtl") + test::ReadFile(dir + "/cube.mtl"));
  const std::string cubeObj = test::ReadFile(cube);
  test::WriteFile(dir + "/both.obj", "mtllib both.mtl\n" + cubeObj.substr(cubeObj.find('\n') + 1) +
                                         "usemtl floor\nv -100 -1.8 -100\nv -100 -1.8 100\nv 100 -1.8 100\n"
                                         "v 100 -1.8 -100\nf 9 10 11\nf 9 11 12\n");
  Scene scene = LoadScene(dir + "/both.obj");
  ASSERT_EQ(scene.materials.size(), 2u);
  SceneData d = BuildSceneData(scene, Camera::LookAt(Vec3(0.5f, 1.5f, 6.0f), Vec3(0.0f), Vec3(0, 1, 0), 45.0f, 64, 64),
                               Vec3(0.0f));
  SetEnvironmentMap(d, test::SkyWithSun(64, 32, 40, 8, 2000.0f), 1.0f, 23.0f);
  ExpectDataAgreement("floor and cube under sun and sky", d, d, 64);
  test::RemoveTree(dir);

  SceneData box = Data(test::ProjectScenesDir() + "/cornell.obj", 64, 64);
  box.environment = Vec3(0.4f, 0.5f, 0.6f);
  UpdateEnvironmentShare(box);
  EXPECT_GT(box.env.params.pick, 0.0f);
  ExpectDataAgreement("Cornell box with --env", box, box, 128);
}

// dir/checker.png (2 x 2: red, blue, green, white) and dir/rough.png (2 x 2 greys), for the layered floors below.
bool WriteCheckerAndRoughness(const std::string& dir) {
  const unsigned char checker[] = {230, 40, 40, 40, 40, 230, 40, 230, 40, 230, 230, 230};
  const unsigned char rough[] = {40, 40, 40, 200, 200, 200, 120, 120, 120, 255, 255, 255};
  return stbi_write_png((dir + "/checker.png").c_str(), 2, 2, 3, checker, 6) != 0 &&
         stbi_write_png((dir + "/rough.png").c_str(), 2, 2, 3, rough, 6) != 0;
}

// Issue 13's material features on both renderers: a floor with Blender's default layer (Ks 0.5, Ns 250, Ni 1.45)
// over a checker map_Kd at -s 2 2 with a map_Ns roughness texture, and a gold-like rough conductor cube (black Kd),
// under the sun-and-sky map: bilinear texture lookups, the coupled layers with their albedo tables, data textures.
TEST(GpuAgreement, TexturedLayeredMaterialsUnderSunAndSky) {
  TRACER_REQUIRE_GPU();
  const std::string dir = test::MakeTempDir();
  ASSERT_TRUE(WriteCheckerAndRoughness(dir));
  test::WriteFile(dir + "/m.mtl",
                  "newmtl floor\nNs 250\nKd 1 1 1\nKs 0.5 0.5 0.5\nNi 1.45\nillum 2\nmap_Kd -s 2 2 checker.png\n"
                  "map_Ns rough.png\nnewmtl cube\nKd 0 0 0\nKs 0.9 0.6 0.2\nNs 400\nillum 2\n");
  const std::string cubeObj = test::ReadFile(test::WriteCubeScene(dir, "cube", 0.5f, Vec3(1, 2, 3), 0.7f));
  test::WriteFile(dir + "/s.obj", "mtllib m.mtl\n" + cubeObj.substr(cubeObj.find('\n') + 1) +
                                      "usemtl floor\nv -6 -1.8 -6\nv -6 -1.8 6\nv 6 -1.8 6\nv 6 -1.8 -6\n"
                                      "vt 0 0\nvt 0 1\nvt 1 1\nvt 1 0\nf 9/1 10/2 11/3\nf 9/1 11/3 12/4\n");
  Scene scene = LoadScene(dir + "/s.obj");
  ASSERT_EQ(scene.materials.size(), 2u);
  EXPECT_EQ(scene.materials[0].cls, kGlossy);
  EXPECT_GE(scene.materials[0].roughnessTexture, 0);
  EXPECT_EQ(scene.materials[1].cls, kGlossy);
  EXPECT_EQ(scene.materials[1].kd.x, 0.0f);
  SceneData d = BuildSceneData(scene, Camera::LookAt(Vec3(0.5f, 2.0f, 6.0f), Vec3(0.0f), Vec3(0, 1, 0), 50.0f, 64, 64),
                               Vec3(0.0f));
  SetEnvironmentMap(d, test::SkyWithSun(64, 32, 40, 8, 2000.0f), 1.0f, 23.0f);
  ExpectDataAgreement("textured layered materials under sun and sky", d, d, 64);
  test::RemoveTree(dir);
}

// Cut-outs on both renderers and both BVHs: a floor lit by a small lamp through a card whose map_d opens one
// quadrant (holed shadows: shadow rays test the cut-out), seen from above through a second card of d 0.5 that the
// view's extension rays pass half the time.
TEST(GpuAgreement, CutoutsInShadowAndViewRays) {
  TRACER_REQUIRE_GPU();
  const std::string dir = test::MakeTempDir();
  ASSERT_TRUE(test::WriteQuadrantOpacity(dir + "/mask.png", 8, true));
  const std::string obj = test::WriteShadowScene(dir, "map_d -clamp on mask.png");
  test::WriteFile(dir + "/veil.mtl", test::ReadFile(dir + "/shadow.mtl") + "newmtl veil\nKd 0.8 0.2 0.2\nd 0.5\n");
  test::WriteFile(dir + "/veil.obj", "mtllib veil.mtl\n" +
                                         test::ReadFile(obj).substr(std::string("mtllib shadow.mtl\n").size()) +
                                         "usemtl veil\nv -1 3 1\nv 1 3 1\nv 1 3 -1\nv -1 3 -1\nf 13 14 15 16\n");
  Scene scene = LoadScene(dir + "/veil.obj");
  ASSERT_EQ(scene.materials.size(), 4u);
  SceneData d =
      BuildSceneData(scene, Camera::LookAt(Vec3(0, 6, 0.001f), Vec3(0.0f), Vec3(0, 1, 0), 70.0f, 64, 64), Vec3(0.0f));
  ASSERT_EQ(d.View().cutouts, 1);
  for (bool binary : {false, true})
    ExpectDataAgreement(std::string("cut-outs, ") + (binary ? "binary" : "wide") + " BVH", d, d, 64, binary, 4);
  test::RemoveTree(dir);
}

// map_Ke on both renderers: a floor lit by an emitter whose texture is dark in one quadrant, seen from above with
// the emitter in view (its texels on camera rays and on BSDF-sampled hits, and at next-event estimation's points).
TEST(GpuAgreement, TexturedEmission) {
  TRACER_REQUIRE_GPU();
  const std::string dir = test::MakeTempDir();
  ASSERT_TRUE(test::WriteQuadrantOpacity(dir + "/glow.png", 8, false));
  test::WriteFile(dir + "/f.mtl", "newmtl floor\nKd 0.5 0.5 0.5\nnewmtl lamp\nKd 0 0 0\nKe 4 3 2\nmap_Ke glow.png\n");
  test::WriteFile(dir + "/f.obj",
                  "mtllib f.mtl\nusemtl floor\nv -4 0 -4\nv -4 0 4\nv 4 0 4\nv 4 0 -4\nf 1 2 3 4\n"
                  "usemtl lamp\nv -1 1 -1\nv 1 1 -1\nv 1 1.5 1\nv -1 1.5 1\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
                  "f 5/1 6/2 7/3 8/4\n");
  SceneData d = BuildSceneData(LoadScene(dir + "/f.obj"),
                               Camera::LookAt(Vec3(0.5f, 0.3f, 5.0f), Vec3(0, 0.6f, 0), Vec3(0, 1, 0), 60.0f, 64, 64),
                               Vec3(0.0f));
  ExpectDataAgreement("textured emission", d, d, 64);
  test::RemoveTree(dir);
}

// Issue 13's features together in one scene, written to dir, at 64x64 under the sun-and-sky map: a floor with Blender's
// default layer over a checker map_Kd, a map_Ns roughness and a normal map (norm) whose four texels lean four ways;
// a slanted wall with tilted, unequal vertex normals (bent where the view needs it), a bump map (-bm 0.5) and a
// map_d that opens one quadrant; and a map_Ke emitter, dark in one quadrant, lighting both.
SceneData EveryFeatureScene(const std::string& dir) {
  EXPECT_TRUE(WriteCheckerAndRoughness(dir));
  const unsigned char normals[] = {200, 128, 220, 60, 128, 220, 128, 200, 220, 128, 60, 220};
  EXPECT_NE(stbi_write_png((dir + "/normals.png").c_str(), 2, 2, 3, normals, 6), 0);
  EXPECT_TRUE(test::WriteHeightRamp(dir + "/ramp.png"));
  EXPECT_TRUE(test::WriteQuadrantOpacity(dir + "/mask.png", 8, true));
  EXPECT_TRUE(test::WriteQuadrantOpacity(dir + "/glow.png", 8, false));
  test::WriteFile(dir + "/all.mtl",
                  "newmtl floor\nNs 250\nKd 1 1 1\nKs 0.5 0.5 0.5\nNi 1.45\nillum 2\nmap_Kd -s 2 2 checker.png\n"
                  "map_Ns rough.png\nnorm -s 3 3 normals.png\n"
                  "newmtl wall\nKd 0.7 0.6 0.3\nKs 0.5 0.5 0.5\nNs 100\nNi 1.5\nbump -bm 0.5 -s 4 1 ramp.png\n"
                  "map_d mask.png\n"
                  "newmtl lamp\nKd 0 0 0\nKe 6 5 4\nmap_Ke glow.png\n");
  test::WriteFile(
      dir + "/all.obj",
      "mtllib all.mtl\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
      "usemtl floor\nv -6 -1.8 -6\nv -6 -1.8 6\nv 6 -1.8 6\nv 6 -1.8 -6\nf 1/1 2/2 3/3\nf 1/1 3/3 4/4\n"
      "usemtl wall\nv -2 -1.8 -1\nv 2 -1.8 -1\nv 2 1.2 -2\nv -2 1.2 -2\n"
      "vn -0.6 0.3 0.74\nvn 0.6 0.3 0.74\nvn 0.5 0.5 0.7\nvn -0.5 0.6 0.6\n"
      "f 5/1/1 6/2/2 7/3/3 8/4/4\n"
      "usemtl lamp\nv -1.5 2.5 1.5\nv 1.5 2.5 1.5\nv 1.5 2.5 -1.5\nv -1.5 2.5 -1.5\nf 12/1 11/2 10/3 9/4\n");
  Scene scene = LoadScene(dir + "/all.obj");
  EXPECT_EQ(scene.materials.size(), 3u);
  EXPECT_TRUE(scene.materials[0].bumpIsNormalMap);
  EXPECT_GE(scene.materials[1].bumpTexture, 0);
  EXPECT_FALSE(scene.materials[1].bumpIsNormalMap);
  EXPECT_GE(scene.materials[1].opacityTexture, 0);
  EXPECT_GE(scene.materials[2].emissionTexture, 0);
  SceneData d = BuildSceneData(
      scene, Camera::LookAt(Vec3(1.0f, 1.5f, 6.5f), Vec3(0, -0.5f, -1), Vec3(0, 1, 0), 60.0f, 64, 64), Vec3(0.0f));
  EXPECT_EQ(d.View().cutouts, 1);
  SetEnvironmentMap(d, test::SkyWithSun(64, 32, 40, 8, 2000.0f), 1.0f, 23.0f);
  return d;
}

// Issue 13's features together in one scene on both renderers (EveryFeatureScene).
TEST(GpuAgreement, EveryMaterialFeatureInOneScene) {
  TRACER_REQUIRE_GPU();
  const std::string dir = test::MakeTempDir();
  const SceneData d = EveryFeatureScene(dir);
  ExpectDataAgreement("every material feature in one scene", d, d, 64);
  test::RemoveTree(dir);
}

// pbrt-v4's materials on both renderers: a mix of a rough and a smooth coated diffuse (the floor), an anisotropic gold
// conductor (the wall, its alphas along the uvs), a rough dielectric sphere, a conductor of pbrt's reflectance form, a
// thin dielectric sheet and a diffuse transmitter, under an area light and a constant environment: every lobe of
// core/lobes.h and the per-hit-point mix in the GPU's shade queues.
TEST(GpuAgreement, PbrtMaterialLobesInOneScene) {
  TRACER_REQUIRE_GPU();
  const std::string dir = test::MakeTempDir();
  const std::string quad = "\"integer indices\" [0 1 2 0 2 3]\n";
  test::WriteFile(
      dir + "/lobes.pbrt",
      "LookAt 0 2.2 6  0 0.6 0  0 1 0\nCamera \"perspective\" \"float fov\" 45\nWorldBegin\n"
      "AttributeBegin AreaLightSource \"diffuse\" \"rgb L\" [8 8 8]\n"
      "Shape \"trianglemesh\" \"point3 P\" [-1 4 -1 1 4 -1 1 4 1 -1 4 1] " +
          quad +
          "AttributeEnd\n"
          "MakeNamedMaterial \"rough\" \"string type\" \"coateddiffuse\" \"rgb reflectance\" [0.7 0.3 0.1] \"float "
          "roughness\" 0.1\n"
          "MakeNamedMaterial \"smooth\" \"string type\" \"coateddiffuse\" \"rgb reflectance\" [0.2 0.5 0.8]\n"
          "MakeNamedMaterial \"floor\" \"string type\" \"mix\" \"string materials\" [\"rough\" \"smooth\"] \"float "
          "amount\" 0.4\n"
          "NamedMaterial \"floor\"\nShape \"trianglemesh\" \"point3 P\" [-4 0 -4 4 0 -4 4 0 4 -4 0 4] "
          "\"point2 uv\" [0 0 1 0 1 1 0 1] \"integer indices\" [0 2 1 0 3 2]\n"
          "Material \"conductor\" \"spectrum eta\" \"metal-Au-eta\" \"spectrum k\" \"metal-Au-k\" \"float uroughness\" "
          "0.05 "
          "\"float vroughness\" 0.4 \"bool remaproughness\" false\n"
          "Shape \"trianglemesh\" \"point3 P\" [-4 0 -2 4 0 -2 4 3 -2 -4 3 -2] \"point2 uv\" [0 0 1 0 1 1 0 1] " +
          quad +
          "AttributeBegin Translate -1.2 0.6 0.5 Material \"dielectric\" \"float roughness\" 0.05\n"
          "Shape \"sphere\" \"float radius\" 0.6 AttributeEnd\n"
          "AttributeBegin Translate 1.2 0.6 0.5 Material \"conductor\" \"rgb reflectance\" [0.9 0.6 0.3]\n"
          "Shape \"sphere\" \"float radius\" 0.6 AttributeEnd\n"
          "Material \"thindielectric\"\n"
          "Shape \"trianglemesh\" \"point3 P\" [-0.5 0 1.5 0.5 0 1.5 0.5 1.2 1.5 -0.5 1.2 1.5] " +
          quad +
          "Material \"diffusetransmission\" \"rgb reflectance\" [0.3 0.3 0.3] \"rgb transmittance\" [0.6 0.4 0.2]\n"
          "Shape \"trianglemesh\" \"point3 P\" [-0.4 0 -1.2 0.4 0 -1.2 0.4 1.6 -0.6 -0.4 1.6 -0.6] " +
          quad);
  const SceneData d = Data(dir + "/lobes.pbrt", 64, 64, nullptr, Vec3(0.3f, 0.3f, 0.35f));
  ExpectDataAgreement("pbrt-v4 material lobes", d, d, 64);
  test::RemoveTree(dir);
}

// Blender's PBR keys on both renderers: scenes/blender4.obj's spheres (sheen, smooth and rough coats over a dielectric
// and a metal, anisotropic metal along the uvs and turned, map_Pm, map_Pr, map_Ps) in the principled lobe of the
// glossy queue, under the scene's area light and a constant environment.
TEST(GpuAgreement, BlenderPbrLayersInOneScene) {
  TRACER_REQUIRE_GPU();
  const SceneData d = Data(test::ProjectScenesDir() + "/blender4.obj", 64, 64, nullptr, Vec3(0.4f, 0.45f, 0.5f));
  ExpectDataAgreement("Blender's PBR layers", d, d, 64);
}

// --aov's first-hit outputs traced on the GPU (ComputeFirstHitAovsCuda) are the CPU's, pixel by pixel, on the scene
// with every material feature (textures, normal and bump maps, cut-outs; wide and binary BVH) and the Cornell box: the
// same per-pixel code, so a value may differ only where the rays' last bits matter (nvcc contracts multiply-adds into
// FMAs, g++ does not): at rays that graze an edge and, we take it, where a cut-out's alpha is fractional (the filtered
// edge of the map_d quadrant), whose test is decided by a hash of the ray's bits. At most 4% of the values by more than
// 1e-3 (relative) on the feature scene and 0.1% on the Cornell box (measured on an H100: 2.0% and none), and each
// output's mean within 1e-3 (the floor's normal map alone tilts the normals all over the floor).
TEST(GpuAov, FirstHitOutputsAreTheCpus) {
  TRACER_REQUIRE_GPU();
  const std::string dir = test::MakeTempDir();
  const SceneData scenes[2] = {EveryFeatureScene(dir), Data(test::ProjectScenesDir() + "/cornell.obj", 64, 64)};
  const int all = kAovAlbedo | kAovNormal | kAovDepth | kAovPosition;
  for (const SceneData& d : scenes)
    for (bool binary : {false, true}) {
      RenderOptions opt = test::QuietRender(64, 64, 16, 8);
      opt.binaryBvh = binary;
      AovImages cpu, gpu;
      ComputeFirstHitAovs(d, opt, all, 8, cpu);
      ComputeFirstHitAovsCuda(d, opt, all, 8, gpu);
      const std::vector<float>* layers[4][2] = {{&cpu.albedo, &gpu.albedo},
                                                {&cpu.normal, &gpu.normal},
                                                {&cpu.depth, &gpu.depth},
                                                {&cpu.position, &gpu.position}};
      for (auto& l : layers) {
        const std::vector<float>&a = *l[0], &b = *l[1];
        ASSERT_EQ(a.size(), b.size());
        ASSERT_FALSE(a.empty());
        size_t off = 0;
        double ma = 0.0, mb = 0.0;
        for (size_t i = 0; i < a.size(); ++i) {
          off += std::fabs(a[i] - b[i]) > 1e-3f * std::max(1.0f, std::fabs(a[i]));
          ma += a[i] == kAovMissDepth ? 0.0 : a[i];
          mb += b[i] == kAovMissDepth ? 0.0 : b[i];
        }
        std::printf("%s BVH: %zu of %zu values differ; means %.6f (cpu) and %.6f (gpu)\n", binary ? "binary" : "wide",
                    off, a.size(), ma / a.size(), mb / b.size());
        EXPECT_LE(off, &d == &scenes[0] ? a.size() / 25 : a.size() / 1000);
        EXPECT_NEAR(ma / a.size(), mb / b.size(), 1e-3 * std::max(1.0, std::fabs(ma / a.size())));
      }
      const size_t hits = std::count_if(gpu.depth.begin(), gpu.depth.end(), [](float z) { return z != kAovMissDepth; });
      EXPECT_GT(hits, gpu.depth.size() / 2) << "the GPU's rays mostly missed";
    }
  test::RemoveTree(dir);
}

// Issue 11's environment checks with known answers (env_light_checks.h) on the GPU: a convex diffuse object of albedo
// 0.5 under a constant environment of 1 (colour and map; importance, BSDF and guided sampling) reads 0.5; under a sky
// with a tiny sun, importance sampling is unbiased and has at most a third of the RMSE of BSDF sampling alone.
TEST(GpuEnvLight, ConvexDiffuseObjectUnderConstantEnvironmentReadsHalf) {
  TRACER_REQUIRE_GPU();
  test::ExpectConvexDiffuseObjectReadsHalf(
      [](const SceneData& d, const RenderOptions& o) { return RenderCuda(d, o).rgb; },
      {EnvSampling::kImportance, EnvSampling::kBsdfOnly, EnvSampling::kGuided});
}
TEST(GpuEnvLight, SunAndSkyImportanceSamplingCutsRmseAndIsUnbiased) {
  TRACER_REQUIRE_GPU();
  test::ExpectSunAndSkyImportanceSamplingCutsRmse(
      [](const SceneData& d, const RenderOptions& o) { return RenderCuda(d, o).rgb; });
}

// The EXR round trip on the GPU: a GPU render with every output to an .exr, read back with OpenEXR, holds layer for
// layer the values that the same command writes as PFM files beside a .png, and the image the .pfm render's, value
// for value (the first-hit layers are the GPU's; FirstHitOutputsAreTheCpus compares them with the host's). Skipped
// in a build without OpenEXR.
TEST(GpuAov, ExrRoundTripWithEveryOutput) {
  TRACER_REQUIRE_GPU();
  if (!ExrSupported()) GTEST_SKIP() << "built without OpenEXR (libopenexr-dev)";
  const std::string dir = test::MakeTempDir();
  const std::string run = test::ProjectScenesDir() + "/cornell.obj --backend cuda --width 32 --height 24 --spp 32 " +
                          "--seed 5 -q --aov albedo,normal,depth,position,variance,samples -o " + dir;
  for (const char* out : {"/a.exr", "/b.png", "/c.pfm"}) {
    const test::CommandResult r = test::RunTracer(run + out);
    ASSERT_EQ(r.exitCode, 0) << r.output;
  }
  struct Layer {
    const char* name;
    std::vector<std::string> channels;
  };
  int w = 0, h = 0;
  for (const Layer& layer :
       {Layer{"albedo", {"albedo.R", "albedo.G", "albedo.B"}}, Layer{"normal", {"normal.X", "normal.Y", "normal.Z"}},
        Layer{"depth", {"depth.Z"}}, Layer{"position", {"position.X", "position.Y", "position.Z"}},
        Layer{"variance", {"variance.R", "variance.G", "variance.B"}}, Layer{"samples", {"samples.Y"}}}) {
    const std::vector<float> exr = ReadExrChannels(dir + "/a.exr", layer.channels, w, h);
    ASSERT_EQ(w, 32);
    ASSERT_EQ(h, 24);
    const std::vector<float> pfm = ReadPfm(dir + "/b." + layer.name + ".pfm", w, h);
    const size_t n = layer.channels.size();
    ASSERT_EQ(exr.size(), static_cast<size_t>(32 * 24) * n) << layer.name;
    double sum = 0.0;
    for (size_t i = 0; i < exr.size(); ++i) {
      ASSERT_EQ(exr[i], pfm[(i / n) * 3 + i % n]) << layer.name << " value " << i;
      sum += std::fabs(exr[i]);
    }
    EXPECT_GT(sum, 0.0) << layer.name << " is empty";
  }
  const std::vector<float> image = ReadExr(dir + "/a.exr", w, h), pfm = ReadPfm(dir + "/c.pfm", w, h);
  EXPECT_EQ(image, pfm);
  test::RemoveTree(dir);
}

// --aov variance on the GPU: passes capped so that there are at least 16, the image byte for byte the one
// without it (the film sums in fixed point, whatever the passes), and the variance of the pixel means, summed over
// the image, within 15% of the CPU's estimate of the same quantity (from its own passes).
TEST(GpuAov, VarianceFromThePassesLeavesTheImageAsItWas) {
  TRACER_REQUIRE_GPU();
  const SceneData d = Data(test::ProjectScenesDir() + "/cornell.obj", 64, 64);
  RenderOptions opt = test::QuietRender(64, 64, 64, 8);
  const RenderResult plain = RenderCuda(d, opt);
  opt.varianceAov = true;
  const RenderResult gpu = RenderCuda(d, opt);
  EXPECT_EQ(gpu.rgb, plain.rgb);
  EXPECT_GE(gpu.varianceBatches, 16);
  const RenderResult cpu = RenderCpu(d, opt);
  ASSERT_EQ(gpu.variance.size(), cpu.variance.size());
  double g = 0.0, c = 0.0;
  for (size_t i = 0; i < gpu.variance.size(); ++i) {
    ASSERT_TRUE(std::isfinite(gpu.variance[i]) && gpu.variance[i] >= 0.0f);
    g += gpu.variance[i];
    c += cpu.variance[i];
  }
  std::printf("variance of the pixel means, summed: gpu %.6g (%d passes), cpu %.6g (%d passes)\n", g,
              gpu.varianceBatches, c, cpu.varianceBatches);
  ASSERT_GT(c, 0.0);
  EXPECT_NEAR(g / c, 1.0, 0.15);
}

// Adaptive sampling on the GPU: a stopped pixel is not generated again and each pixel is divided by its own count,
// so the blocks of adaptive GPU renders agree with uniform CPU renders' within 4 standard errors (8 seeds each, block
// by block and over the whole image); and the GPU spends as many samples as the CPU's adaptive render of the same
// seed, within 10% (the stop rule reads the same kind of film; the decisions differ with the noise).
TEST(GpuAdaptive, AgreesWithUniformCpuRendersAndSpendsAsTheCpuDoes) {
  TRACER_REQUIRE_GPU();
  const int w = 64, h = 64;
  const SceneData d = Data(test::ProjectScenesDir() + "/cornell.obj", w, h);
  const RenderOptions uniform = test::QuietRender(w, h, 64, 8);
  RenderOptions adaptive = test::QuietRender(w, h, 512, 8);
  adaptive.adaptiveThreshold = 0.1f;
  auto meanSpp = [](const RenderResult& r) {
    double n = 0.0;
    for (uint32_t s : r.film.pixelSpp) n += s;
    return n / static_cast<double>(r.film.pixelSpp.size());
  };
  double gpuSpp = 0.0;
  const test::BlockSeries gpu = test::RenderBlocks(
      [&](unsigned s) {
        RenderOptions o = adaptive;
        o.seed = s + 1000u;
        const RenderResult r = RenderCuda(d, o);
        EXPECT_EQ(r.film.pixelSpp.size(), static_cast<size_t>(w * h));
        gpuSpp += meanSpp(r) / 8;
        return r.rgb;
      },
      8, w, h, 16);
  const test::BlockSeries cpu = test::RenderBlocks(
      [&](unsigned s) {
        RenderOptions o = uniform;
        o.seed = s;
        return RenderCpu(d, o).rgb;
      },
      8, w, h, 16);
  size_t worst = 0;
  const double z = test::MaxBlockZ(cpu, gpu, &worst);
  const double wholeZ = test::WholeImageZ(cpu, gpu);
  RenderOptions one = adaptive;
  one.seed = 1000u + 100u;
  const double gpuOne = meanSpp(RenderCuda(d, one)), cpuOne = meanSpp(RenderCpu(d, one));
  std::printf(
      "adaptive GPU against uniform CPU: max block z %.2f, whole image z %.2f; %.1f spp on average of 512; "
      "seed %u: gpu %.1f, cpu %.1f spp\n",
      z, wholeZ, gpuSpp, one.seed, gpuOne, cpuOne);
  EXPECT_TRUE(gpu.allFinite);
  EXPECT_LT(z, 4.0);
  EXPECT_LT(wholeZ, 4.0);
  EXPECT_LT(gpuSpp, 0.8 * 512);
  EXPECT_NEAR(gpuOne / cpuOne, 1.0, 0.1);
}

// Mean radiance of the Cornell box at 1024 spp, GPU against CPU, within 0.5%.
TEST(GpuAgreement, CornellMeanAt1024spp) {
  TRACER_REQUIRE_GPU();
  SceneData data = Data(test::ProjectScenesDir() + "/cornell.obj", 128, 128);
  RenderOptions opt;
  opt.width = opt.height = 128;
  opt.spp = 1024;
  auto mean = [](const std::vector<float>& v) {
    double s = 0;
    for (float x : v) s += x;
    return s / v.size();
  };
  double c = mean(RenderCpu(data, opt).rgb);
  opt.seed = 99;  // independent samples, so the comparison is not trivially exact
  double g = mean(RenderCuda(data, opt).rgb);
  std::printf("Cornell mean radiance at 1024 spp: cpu %.6f gpu %.6f (rel. diff %.4f%%)\n", c, g, 100.0 * (g - c) / c);
  EXPECT_NEAR(g, c, 0.005 * c);
}

// Every naive twin renders the same image as the optimised path. The film sums in fixed point and every
// path draws its own random numbers, so where the arithmetic is identical the images are bit-identical.
TEST(GpuVariants, NaiveTwinsRenderTheSameImage) {
  TRACER_REQUIRE_GPU();
  SceneData data = Data(test::ProjectScenesDir() + "/cornell.obj", 48, 40);
  RenderOptions base;
  base.width = 48;
  base.height = 40;
  base.spp = 16;
  base.pathsInFlight = 4096;  // several passes and regeneration
  RenderResult ref = RenderCuda(data, base);
  auto same = [&](RenderOptions o, const char* what) {
    RenderResult r = RenderCuda(data, o);
    EXPECT_EQ(0, std::memcmp(ref.rgb.data(), r.rgb.data(), ref.rgb.size() * 4)) << what << " changed the image";
  };
  RenderOptions o = base;
  o.naiveLayout = true;
  same(o, "--naive-layout");
  o = base;
  o.compaction = Compaction::kPerThreadAtomic;
  same(o, "--naive-compaction");
  o = base;
  o.compaction = Compaction::kNone;
  same(o, "--no-compaction");
  o = base;
  o.singleShadeKernel = true;
  same(o, "--single-shade-kernel");
  o = base;
  o.plainLoads = true;
  same(o, "--plain-loads");
  o = base;
  o.pageableReadback = true;
  same(o, "--pageable-readback");
  o = base;
  o.serialShadows = o.serialShading = true;
  same(o, "--serial-shadows --serial-shading");
  o = base;
  o.naiveLayout = true;
  o.compaction = Compaction::kNone;
  same(o, "--naive-layout --no-compaction");
  // The traversal twins trace the same rays to the same closest hits, except where two triangles tie at the
  // same distance (a shared edge), which the binary BVH, or another order of postponed triangle tests, may
  // resolve to the other triangle: a handful of values, never the mean.
  auto nearlySame = [&](RenderOptions v, const char* what) {
    RenderResult r = RenderCuda(data, v);
    ASSERT_EQ(r.rgb.size(), ref.rgb.size());
    size_t differ = 0;
    double a = 0, b = 0;
    for (size_t i = 0; i < r.rgb.size(); ++i) {
      differ += r.rgb[i] != ref.rgb[i];
      a += ref.rgb[i];
      b += r.rgb[i];
    }
    std::printf("%s: %zu of %zu values differ from the default's\n", what, differ, r.rgb.size());
    EXPECT_LE(differ, r.rgb.size() / 500) << what;
    EXPECT_NEAR(b / a, 1.0, 1e-3) << what;
  };
  for (int refill : {0, 1, 32}) {
    o = base;
    o.persistentRefill = refill;
    nearlySame(o, refill == 0 ? "--one-thread-per-ray" : refill == 1 ? "--persistent 1" : "--persistent 32");
  }
  o = base;
  o.perRayCameraBounce = !base.perRayCameraBounce;
  nearlySame(o, "the camera's bounce persistent too (--persistent 24)");
  o = base;
  o.binaryBvh = true;
  nearlySame(o, "--bvh binary");
  // Sorting only changes which lane traces which ray (and so, with postponed triangle tests, the order of ties).
  o = base;
  o.sortRays = true;
  o.collectStats = true;
  nearlySame(o, "--sort-rays");
  RenderResult sorted = RenderCuda(data, o);
  const bool ranSort = std::any_of(sorted.stats.kernelMs.begin(), sorted.stats.kernelMs.end(),
                                   [](const auto& k) { return k.first == "sort_rays" && k.second > 0.0; });
  EXPECT_TRUE(ranSort) << "--sort-rays did not run the sort stage";
}

TEST(GpuVariants, SameSeedSameImage) {
  TRACER_REQUIRE_GPU();
  SceneData data = Data(test::ProjectScenesDir() + "/cornell.obj", 32, 32);
  RenderOptions o;
  o.width = o.height = 32;
  o.spp = 8;
  RenderResult a = RenderCuda(data, o), b = RenderCuda(data, o);
  EXPECT_EQ(0, std::memcmp(a.rgb.data(), b.rgb.data(), a.rgb.size() * 4));
}

// Renders of the lit conference room, bit for bit, at the size and sample count of the MPI scaling runs (1920x1080,
// 256 spp, depth 8; the GPU-built BVH, as `tracer` renders it on a GPU; the camera and the two ceiling lights of
// src/scripts/prepare-scenes.sh, which this test adds itself: the archive's room has no emitter, and was rendered
// black here until 2026-11-26). Its coplanar duplicates give closest hits at equal t, which the persistent-thread
// traversal (lanes refilled as warps drain, postponed triangle tests) settled by the order it happened to test
// them in until NearerHit settled them by triangle index; and a ray grazing a floor got a t before its triangle's
// box, so its hit was kept or culled by the same accident of order until HitDistance (core/bvh.h): one or two of
// its 530M samples then differed in three runs of four, and between one process and several under MPI.
// Sorted rays too (another thread mapping), the shadow stages in line (--serial-shadows) rather than beside the next
// bounce, and the miss and shade stages one after another (--serial-shading), at a size where the streams' kernels do
// overlap.
TEST(GpuVariants, ConferenceRendersAreBitIdentical) {
  TRACER_REQUIRE_GPU();
  TRACER_SHARED_SCENE_OR_SKIP(archive, "conference.tar.xz");
  if (!test::HaveTarXz()) GTEST_SKIP() << "tar or xz is not installed: cannot unpack " << archive;
  const std::string dir = test::Unpack(archive);
  ASSERT_FALSE(dir.empty()) << "cannot unpack " << archive;
  {
    std::ofstream obj(dir + "/conference/conference.obj", std::ios::app),
        mtl(dir + "/conference/conference.mtl", std::ios::app);
    obj << "\no added_lights\nusemtl added_light\n";
    for (int x0 : {0, 900})
      obj << "v " << x0 << " 490 -600\nv " << x0 + 400 << " 490 -600\nv " << x0 + 400 << " 490 100\nv " << x0
          << " 490 100\nf -4 -3 -2 -1\n";
    mtl << "\nnewmtl added_light\nKd 0.8 0.8 0.8\nKe 8 8 8\n";
  }
  const Scene scene = LoadScene(dir + "/conference/conference.obj");
  test::RemoveTree(dir);
  const int w = 1920, h = 1080;
  const Camera camera = Camera::LookAt(Vec3(-650, 300, 450), Vec3(1000, 120, -600), Vec3(0, 1, 0), 55.0f, w, h);
  BvhBuildOptions gpuBuild;
  gpuBuild.builder = &BuildBvhsOnGpu;
  const SceneData data = BuildSceneData(scene, camera, Vec3(0.0f), gpuBuild);
  ASSERT_EQ(data.bvhReport.builder, "gpu") << data.bvhReport.note;
  RenderOptions o;
  o.width = w;
  o.height = h;
  o.spp = 256;
  o.maxDepth = 8;
  o.seed = 3;
  o.quiet = true;
  const RenderResult a = RenderCuda(data, o);
  double mean = 0.0;
  for (float v : a.rgb) mean += v;
  mean /= static_cast<double>(a.rgb.size());
  EXPECT_GT(mean, 0.01) << "the room must be lit for the comparison to mean anything";
  const char* kVariants[] = {"again", "again", "--sort-rays", "--serial-shadows", "--serial-shading"};
  for (int variant = 0; variant < 5; ++variant) {
    o.sortRays = variant == 2;
    o.serialShadows = variant == 3;
    o.serialShading = variant == 4;
    const RenderResult b = RenderCuda(data, o);
    ASSERT_EQ(a.rgb.size(), b.rgb.size());
    size_t differ = 0;
    for (size_t i = 0; i < a.rgb.size(); ++i) differ += std::memcmp(&a.rgb[i], &b.rgb[i], sizeof a.rgb[i]) != 0;
    EXPECT_EQ(differ, 0u) << "render " << variant + 2 << " (" << kVariants[variant] << "): " << differ << " of "
                          << a.rgb.size() << " channel values differ from the first render";
  }
}

TEST(GpuStats, CompactionKeepsWarpsFull) {
  TRACER_REQUIRE_GPU();
  SceneData data = Data(test::ProjectScenesDir() + "/cornell.obj", 128, 128);
  RenderOptions o;
  o.width = o.height = 128;
  o.spp = 16;
  o.collectStats = true;
  RenderResult packed = RenderCuda(data, o);
  o.compaction = Compaction::kNone;
  RenderResult sparse = RenderCuda(data, o);
  std::printf("active lanes per shade warp: compacted %.1f, no compaction %.1f\n", packed.stats.activeLanesShade,
              sparse.stats.activeLanesShade);
  EXPECT_GT(packed.stats.activeLanesShade, 28.0);
  EXPECT_LT(sparse.stats.activeLanesShade, packed.stats.activeLanesShade);
  ASSERT_GE(packed.stats.livePerBounce.size(), 2u);
  EXPECT_GT(packed.stats.livePerBounce[0], packed.stats.livePerBounce.back());
}

// The banded min-plus step and the dense float kernels compute the same guide, so they render the same image,
// bit for bit (the dense DPX kernel rounds costs to 2^-16: unbiased too, but not the same image).
TEST(GpuTiles, BandedAndDenseStepsRenderTheSameImage) {
  TRACER_REQUIRE_GPU();
  TileCase c = TileRender("manylights.obj", 96, 64, 8);
  c.opt.tileSize = 8;
  c.opt.minPlus = MinPlusKernel::kBand;
  const RenderResult band = RenderCuda(c.data, c.opt);
  for (MinPlusKernel k : {MinPlusKernel::kTiled, MinPlusKernel::kCoalesced}) {
    c.opt.minPlus = k;
    const RenderResult dense = RenderCuda(c.data, c.opt);
    ASSERT_EQ(band.rgb.size(), dense.rgb.size());
    EXPECT_EQ(0, std::memcmp(band.rgb.data(), dense.rgb.data(), band.rgb.size() * sizeof(float)))
        << "--minplus " << MinPlusKernelName(k) << " rendered another image than --minplus band";
  }
}

// An 8K frame with the tile guide: 480 x 270 = 129,600 tiles. The dense guide could not run it: its
// dissimilarity kernel put the tiles on the grid's y dimension (at most 65,535) and failed to launch, and its
// matrix would take 67 GB. The image must come out finite and lit.
TEST(GpuTiles, EightKFrameRenders) {
  TRACER_REQUIRE_GPU();
  const int w = 7680, h = 4320;
  TileCase c = TileRender("cornell.obj", w, h, 1);
  c.opt.maxDepth = 3;
  const RenderResult r = RenderCuda(c.data, c.opt);
  ASSERT_EQ(r.rgb.size(), static_cast<size_t>(w) * h * 3);
  double sum = 0.0;
  size_t bad = 0;
  for (float v : r.rgb) {
    bad += !std::isfinite(v) || v < 0.0f;
    sum += v;
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(sum / r.rgb.size(), 0.01) << "an 8K tiles render came out black";
}

// Tile-guided light selection on the GPU is unbiased: its image mean equals that of selection by power
// within 4 standard errors (independent seeds), on the Cornell box, the many-light scene and the courtyards under a
// constant sky (the environment as the guide's last cluster); and on the last two it lowers the error per pixel (a
// cheap check that the guide is in use at all).
TEST(GpuTiles, UnbiasedAgainstPowerAndLessNoisyWithManyLights) {
  TRACER_REQUIRE_GPU();
  for (const char* file : {"cornell.obj", "manylights.obj", "courtyards.obj"}) {
    const int seeds = 8;
    const bool sky = std::string(file) == "courtyards.obj";
    // Each run below sets the light sampling.
    TileCase c = TileRender(file, 96, 64, sky ? 64 : 16, sky ? Vec3(0.8f, 0.9f, 1.0f) : Vec3(0.0f));
    ASSERT_TRUE(!sky || c.data.env.params.pick > 0.0f) << c.data.env.params.pick;
    c.opt.tileSize = 8;
    const SceneData& data = c.data;
    const RenderOptions& opt = c.opt;
    auto run = [&](LightSampling ls, unsigned seedBase, std::vector<std::vector<float>>* images) {
      std::vector<double> means;
      for (int s = 0; s < seeds; ++s) {
        RenderOptions o = opt;
        o.lightSampling = ls;
        o.seed = seedBase + s;
        std::vector<float> rgb = RenderCuda(data, o).rgb;
        double m = 0;
        for (float v : rgb) m += v;
        means.push_back(m / rgb.size());
        images->push_back(std::move(rgb));
      }
      double m = 0, v = 0;
      for (double x : means) m += x;
      m /= seeds;
      for (double x : means) v += (x - m) * (x - m);
      return std::make_pair(m, std::sqrt(v / (seeds - 1) / seeds));
    };
    std::vector<std::vector<float>> powerImages, tileImages;
    auto p = run(LightSampling::kPower, 10, &powerImages), t = run(LightSampling::kTiles, 60, &tileImages);
    double z = std::fabs(p.first - t.first) / std::hypot(p.second, t.second);
    // Per-pixel spread across seeds, averaged: the noise of each strategy.
    auto noise = [&](const std::vector<std::vector<float>>& imgs) {
      double total = 0;
      for (size_t i = 0; i < imgs[0].size(); ++i) {
        double m = 0, v = 0;
        for (auto& im : imgs) m += im[i];
        m /= imgs.size();
        for (auto& im : imgs) v += (im[i] - m) * (im[i] - m);
        total += v / (imgs.size() - 1);
      }
      return std::sqrt(total / imgs[0].size());
    };
    double np = noise(powerImages), nt = noise(tileImages);
    std::printf("%s: power %.5f +- %.5f, tiles %.5f +- %.5f, z = %.2f; per-pixel noise power %.4f tiles %.4f\n", file,
                p.first, p.second, t.first, t.second, z, np, nt);
    EXPECT_LT(z, 4.0) << file;
    EXPECT_TRUE(std::string(file) == "cornell.obj" || nt < 0.8 * np)
        << file << ": the tile guide does not reduce noise (" << nt << " against " << np << ")";
  }
}

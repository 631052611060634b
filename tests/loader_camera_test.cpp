// @file loader_camera_test.cpp: the camera file: settings parsed, errors named by file and line, the scene's own read.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "loader_test_util.h"

namespace tracer::test {
namespace {

// ---- camera files -------------------------------------------------------------------------------------

TEST_F(LoaderTest, CameraFileParses) {
  CameraSpec cam =
      LoadCameraFile(Write("a.camera", "# a camera\n\neye 278 273 -800\r\n  look_at\t278 273 0 # target\nfov 39.3"));
  EXPECT_TRUE(cam.valid);
  EXPECT_EQ(cam.eye.z, -800.0f);
  EXPECT_EQ(cam.lookAt.x, 278.0f);
  EXPECT_EQ(cam.up.y, 1.0f);  // default
  EXPECT_FLOAT_EQ(cam.fovY, 39.3f);
  EXPECT_EQ(LoadCameraFile(Write("b.camera", "eye 0 0 1\nlook_at 0 0 0\nup 1 0 0\n")).fovY, 45.0f);
}

TEST_F(LoaderTest, CameraFileErrorsNameFileAndLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"eye 0 0 1\nlook_at 0 0 0\nfov 180\n", "c.camera:3:"},
      {"eye 0 0 1\nlook_at 0 0 0\nfov 0\n", "c.camera:3:"},
      {"eye 0 0 1\nlook_at 0 0 nan\n", "c.camera:2:"},
      {"eye 0 0\nlook_at 0 0 0\n", "c.camera:1:"},
      {"eye 0 0 1\nlookat 0 0 0\n", "c.camera:2:"},
      {"eye 0 0 1\neye 0 0 2\nlook_at 0 0 0\n", "c.camera:2:"},
      {"eye 0 0 1\nlook_at 0 0 0\nup 0 0 3\n", "c.camera:3:"},
      {"eye 0 0 1\nlook_at 0 0 1\n", "c.camera:2:"},
      {"look_at 0 0 0\n", "c.camera: 'eye' is required"},
      {"eye 0 0 0\n", "c.camera: 'look_at' is required"},
  };
  for (const auto& [text, expected] : cases) {
    SCOPED_TRACE(text);
    std::string path = Write("c.camera", text);
    try {
      LoadCameraFile(path);
      ADD_FAILURE() << "no error";
    } catch (const SceneError& e) {
      EXPECT_TRUE(Contains(e.what(), expected)) << e.what();
    }
  }
}

TEST_F(LoaderTest, SceneCameraFileIsPickedUpAndChecked) {
  std::string obj = Write("cam.obj", std::string(kTriangle) + "f 1 2 3\n");
  EXPECT_FALSE(LoadScene(obj).camera.valid);
  Write("cam.camera", "eye 0 0 5\nlook_at 0 0 0\nfov 30\n");
  Scene scene = LoadScene(obj);
  EXPECT_TRUE(scene.camera.valid);
  EXPECT_EQ(scene.camera.fovY, 30.0f);
  Write("cam.camera", "eye 0 0 5\n");
  EXPECT_TRUE(Contains(LoadError(obj), "cam.camera: 'look_at' is required"));
}

}  // namespace
}  // namespace tracer::test

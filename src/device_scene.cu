// @file device_scene.cu: uploads the scene's arrays and points a SceneView at the device copies.
#include "tracer/cuda/device_scene.h"

namespace tracer {

DeviceScene::DeviceScene(const SceneData& d) {
  view = d.View();  // scalars and camera; every array's pointer is replaced below
#define TRACER_UPLOAD_SCENE_ARRAY(T, name, dataMember, viewMember, what) \
  name.Upload(d.dataMember, what);                                       \
  view.viewMember = name.Get();
  TRACER_SCENE_ARRAYS(TRACER_UPLOAD_SCENE_ARRAY)
#undef TRACER_UPLOAD_SCENE_ARRAY
}

}  // namespace tracer

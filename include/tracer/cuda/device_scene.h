// @file device_scene.h: the scene's arrays uploaded to the device, and the SceneView pointing at them.
#pragma once
#include "tracer/core/scene_view.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/host/scene_data.h"

namespace tracer {

struct DeviceScene {
  // One buffer per array of TRACER_SCENE_ARRAYS (core/scene_view.h), named as the list names it; a buffer
  // of an empty array holds nothing and its pointer in `view` is null.
#define TRACER_DEVICE_SCENE_BUFFER(T, name, dataMember, viewMember, what) DeviceBuffer<T> name;
  TRACER_SCENE_ARRAYS(TRACER_DEVICE_SCENE_BUFFER)
#undef TRACER_DEVICE_SCENE_BUFFER
  SceneView view{};

  explicit DeviceScene(const SceneData& d);
};

}  // namespace tracer

// @file device_scene.h: the scene's arrays uploaded to the device, and the SceneView pointing at them; and the
// same scene handed between processes of one node (CUDA IPC), device to device.
#pragma once
#include <vector>

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
  Vec3 boundsMin, boundsMax;  // the scene's (SceneData's)

  explicit DeviceScene(const SceneData& d);
  // A copy of another process's DeviceScene on this node, from the bytes of its Export(): every array copied from
  // that process's device to this one (peer to peer where the devices differ), on `stream`, finished on return.
  // Throws CudaError where the driver cannot map the other process's memory (no peer access between the devices,
  // or IPC unsupported), std::invalid_argument for bytes that are no Export().
  DeviceScene(const std::vector<unsigned char>& exported, cudaStream_t stream);
  // What another process of this node needs to copy this scene: the view's scalars, and each array's size and
  // CUDA IPC handle. Those processes read this scene's memory while they copy: keep it until they are done.
  std::vector<unsigned char> Export() const;
};

}  // namespace tracer

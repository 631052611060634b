// @file device_scene.h: the scene's arrays uploaded to the device, and the SceneView pointing at them.
#pragma once
#include "tracer/core/scene_view.h"
#include "tracer/cuda/device_buffer.h"
#include "tracer/host/scene_data.h"

namespace tracer {

struct DeviceScene {
  DeviceBuffer<BvhNode> nodes;
  DeviceBuffer<Float4> tris, texels;
  DeviceBuffer<TriShading> shading;
  DeviceBuffer<Material> materials;
  DeviceBuffer<TextureInfo> textures;
  DeviceBuffer<AliasEntry> lightAlias;
  DeviceBuffer<int32_t> emitterTri, triEmitter;
  DeviceBuffer<int32_t> clusterStart, emitterCluster;
  DeviceBuffer<AliasEntry> clusterAlias;
  DeviceBuffer<float> emitterInClusterPmf, clusterPowerPmf;
  SceneView view{};

  explicit DeviceScene(const SceneData& d);
};

}  // namespace tracer

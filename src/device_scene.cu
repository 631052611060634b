// @file device_scene.cu: uploads the scene's arrays and points a SceneView at the device copies.
#include "tracer/cuda/device_scene.h"

namespace tracer {

DeviceScene::DeviceScene(const SceneData& d) {
  nodes.Upload(d.bvh.nodes, "BVH nodes");
  tris.Upload(d.bvh.tris, "triangles");
  shading.Upload(d.shading, "triangle shading");
  materials.Upload(d.materials, "materials");
  texels.Upload(d.texels, "texels");
  textures.Upload(d.textures, "textures");
  lightAlias.Upload(d.lightAlias, "light alias table");
  emitterTri.Upload(d.emitterTri, "emitters");
  triEmitter.Upload(d.triEmitter, "triangle emitters");
  view = d.View();  // scalars and camera; pointers replaced below
  view.bvh.nodes = nodes.Get();
  view.bvh.tris = tris.Get();
  view.shading = shading.Get();
  view.materials = materials.Get();
  view.texels = texels.Get();
  view.textures = textures.Get();
  view.lightAlias = lightAlias.Get();
  view.emitterTri = emitterTri.Get();
  view.triEmitter = triEmitter.Get();
  const LightClusters& lc = d.clusters;
  if (lc.Count() > 0) {
    clusterStart.Upload(lc.clusterStart, "light clusters");
    emitterCluster.Upload(lc.emitterCluster, "light clusters");
    clusterAlias.Upload(lc.clusterAlias, "light clusters");
    emitterInClusterPmf.Upload(lc.emitterInClusterPmf, "light clusters");
    clusterPowerPmf.Upload(lc.clusterPowerPmf, "light clusters");
    view.tiles.clusterStart = clusterStart.Get();
    view.tiles.emitterCluster = emitterCluster.Get();
    view.tiles.clusterAlias = clusterAlias.Get();
    view.tiles.emitterInClusterPmf = emitterInClusterPmf.Get();
    view.tiles.clusterPowerPmf = clusterPowerPmf.Get();
  }
}

}  // namespace tracer

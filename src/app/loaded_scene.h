// @file loaded_scene.h: the scene of a render or profile: loaded, its camera chosen, its BVH built, with the loader's
// warnings and (under --verbose) the details on stderr.
#pragma once
#include <string>

#include "app/camera_choice.h"
#include "app/cli.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"

namespace tracer {

struct LoadedScene {
  Scene scene;               // as loaded: the checkpoint hashes it
  SceneData data;            // what the backends render
  CameraDiagnosis camera;    // a render's look through the camera (unless --quiet), for the warnings
  double loadSeconds = 0.0;  // loading and building, as "loaded and built the BVH in" says
};

// Loads the scene (the environment map first), builds the BVH with `builder` (ChooseBvhBuilder's; null: on the
// host), and the emitter clusters when `buildClusters` (tile guiding may need them). Prints the loader's warnings
// (and NoLightWarning where neither the scene nor --env/--env-map lights it) and, when cli.Details(), the scene, its
// bounds, the camera and the build; a render (unless --quiet) also probes the camera (DiagnoseCamera) and warns about
// what it found.
LoadedScene LoadAndBuild(const CliOptions& cli, bool buildClusters, BvhBuilderFn builder);

}  // namespace tracer

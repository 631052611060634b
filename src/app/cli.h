// @file cli.h: the tracer command line as one struct, filled by ParseCli, and the commands that run it.
// Kept light (no BVH, material or integrator header) so that main.cpp and tests can include it cheaply.
#pragma once
#include <string>
#include <vector>

#include "tracer/core/math.h"
#include "tracer/host/denoise.h"
#include "tracer/host/exit_code.h"
#include "tracer/host/make_rays.h"
#include "tracer/host/render_options.h"

namespace tracer {

class Job;

// ParseCli returns kContinue when the command should run; any other value is the process exit code.

enum class CliCommand { kRender, kProfile, kBenchmark };

// Every flag, validated. `render` holds the flags that go straight into the render; the render command
// adds the default --spp (it depends on the backend), the resumed film and the checkpoint callback.
struct CliOptions {
  CliCommand command = CliCommand::kRender;
  bool otherRank = false;  // a rank other than 0 of an MPI job: ParseCli checked no file and printed nothing
  RenderOptions render;
  std::string scenePath;
  std::string outPath;
  std::string backend;    // auto, cpu or cuda
  bool sppGiven = false;  // else the backend picks the default --spp
  bool verbose = false;   // --verbose (render.quiet is --quiet)
  float exposure = 0.0f;
  bool exrHalf = false;  // --exr-half
  int aovKinds = 0;      // --aov: AovKind bits (host/aov.h)
  int aovSamples = 8;    // --aov-samples: camera rays per pixel for the first-hit outputs
  bool denoise = false;  // --denoise [nfor|atrous] (render.halfBuffers goes with it)
  DenoiseMethod denoiseMethod = DenoiseMethod::kNfor;
  Vec3 env;
  bool envGiven = false;          // --env or --env-map: else a scene file's own environment (pbrt-v4) is used
  bool envSamplingGiven = false;  // --env-sampling (portals, the default, is then asked for, not only defaulted to)
  // --env-map FILE (host/env_map.h), turned by envRotate degrees about +y, its radiance times envScale.
  std::string envMapPath;
  float envRotate = 0.0f, envScale = 1.0f;
  bool allowOutsidePaths = false;
  bool naiveObjParse = false;             // --naive-obj-parse: LoadOptions::tinyobjParse
  std::vector<std::string> texturePaths;  // --texture-path, in order
  bool checkNan = false;                  // render only: a profile must not stop at a NaN
  bool spatialSplits = true;              // in the wide BVH's build (--no-spatial-splits: off; BvhBuildOptions)
  std::string bvhBuilder = "auto";        // --bvh-builder: auto (gpu on the GPU backend, else cpu), gpu or cpu
  // Camera: explicit --eye/--look-at win over SCENE.camera, which wins over framing the bounds.
  bool explicitCamera = false;
  Vec3 eye, lookAt, up;
  bool haveFov = false;
  float fov = 0.0f;
  float aperture = -1.0f, focusDistance = -1.0f;  // --aperture, --focus-distance; < 0: not given
  // Long renders
  std::string checkpointPath, resumePath;
  // --profile / --benchmark
  std::string reportPath;
  int repeats = 5;  // also --trace-rays
  // Ray files (host/ray_file.h): --trace-rays replaces the render; --dump-rays goes with one (CPU only).
  std::string traceRaysPath, hitsPath, dumpRaysDir;
  bool anyHit = false;
  // --make-rays KIND FILE (host/make_rays.h) replaces the render too; --width/--height default to 1920x1080.
  std::string makeRaysPath;
  RayKind makeRaysKind = RayKind::kPrimary;

  // Whether stderr gets the details (the scene, the camera, the BVH build, where the time went): under --verbose,
  // and for --profile and --benchmark, whose details are their point; never under --quiet. A render otherwise
  // says what it renders and, at the end, how fast and where the image went, plus any warning.
  bool Details() const { return !render.quiet && (verbose || command != CliCommand::kRender); }
};

// Parses and validates argv into `options`. Prints --help or --version (returns 0) or "tracer: usage error: ..."
// (returns 2); returns kContinue when the command should run. `otherRank`: a rank other than 0 of an MPI job, which
// checks no file (the scene, the outputs and the checkpoint are rank 0's) and prints nothing (rank 0 prints).
int ParseCli(int argc, char** argv, CliOptions& options, bool otherRank = false);

// The render command: load, render (resuming and checkpointing as asked), write; returns the exit code. Under
// MPI (job.h), rank 0 loads and writes and every rank renders.
int RunRenderCommand(CliOptions& options, Job& job);

// --profile and --benchmark: load, measure on the GPU, write the report; returns the exit code. Under MPI, each
// rank measures on its own GPU and writes its own report.
int RunProfileCommand(CliOptions& options, Job& job);

// --trace-rays: load, build the BVH, trace the ray file, write --hits, print rays/s; returns the exit code.
int RunTraceRaysCommand(CliOptions& options);

// --make-rays: load, build the BVH, write the benchmark ray file, print what it holds; returns the exit code.
int RunMakeRaysCommand(CliOptions& options);

}  // namespace tracer

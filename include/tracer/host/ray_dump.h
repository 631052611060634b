// @file ray_dump.h: --dump-rays: a CPU render that also writes the rays entering intersect and shadow in each
// bounce of its first pass, in the ray-file format (host/ray_file.h). Implemented by the CPU backend
// (src/host/render/cpu_backend.cpp); the image is the same as without the dump.
#pragma once
#include <string>

#include "tracer/host/pass_driver.h"

namespace tracer {

struct SceneData;

// Renders as RenderCpu does, and writes DIR/bounce-K-extension.bin and DIR/bounce-K-shadow.bin for every
// bounce K (wavefront iteration) of the first pass; a record's id is the pixel index (y * width + x) of the
// path the ray belongs to, for both kinds. With path regeneration (the default) an extension file of K > 0
// holds new camera rays as well as continuations. Throws std::runtime_error when a file cannot be written.
RenderResult RenderCpuDumpingRays(const SceneData& scene, const RenderOptions& options, const std::string& dir,
                                  const ProgressFn& progress = {});

}  // namespace tracer

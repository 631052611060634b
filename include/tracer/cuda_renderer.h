// @file cuda_renderer.h: the CUDA wavefront renderer's entry points (only built when nvcc is found).
#pragma once
#include <string>

#include "tracer/render_host.h"

namespace tracer {

// True when a CUDA device and driver are usable; otherwise explains why in `why`.
bool CudaAvailable(std::string& why);

// Renders on the GPU. Throws std::runtime_error (CUDA errors carry file:line) on failure; an out-of-memory
// error names the bytes requested and suggests --paths-in-flight.
RenderResult RenderCuda(const SceneData& scene, const RenderOptions& options, const ProgressFn& progress = {});

}  // namespace tracer

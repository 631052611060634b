// @file render_params.h: the per-render constants every stage reads (image size, seed, depth, clamp, pass).
#pragma once
#include <cstdint>

#include "tracer/core/common.h"

namespace tracer {

struct RenderParams {
  int32_t width, height;
  uint32_t seed;
  int32_t maxDepth;       // number of bounces; 0 shows emitters and the environment only
  int32_t rouletteDepth;  // Russian roulette starts at this depth
  float clamp;            // firefly clamp on each contribution's max component; <= 0 means off
  uint32_t sampleBase;    // first sample index of this pass
  int32_t guideLights;    // 1: tile-guided emitter choice (scene.tiles), 0: by power
  int32_t envBsdfOnly;    // 1 (--env-sampling uniform, the naive twin): no next-event estimation of the environment
  // --env-sampling portals (the default), where the scene has portals: the portals' share of environment samples
  // (--env-portal-mix, core/portals.h), or -1 for the environment's own (EnvParams::portalMix, --env-portal-mix auto);
  // 0 (--env-sampling importance, uniform or guided): portals unused.
  float envPortalMix;
  int32_t envPortalByArea;      // 1 (--naive-portal-pick): portal triangles picked by area, not by their solid angle
  int32_t envPortalLoop;        // 1 (--naive-portal-pdf): every portal sample's pdf summed over all pieces (PortalPdf)
  int32_t envPortalAreaPoints;  // 1 (--naive-portal-point): portal points uniform in area, not in solid angle
  // Adaptive sampling: this pass samples only these pixels (ascending, in the backend's memory); 0: every pixel.
  uint32_t activeCount;
  const uint32_t* activePixels;
};

// The pixels a pass samples: adaptive sampling's active ones, or every pixel. A pass has PassPixels * spp work items.
TRACER_HD uint64_t PassPixels(const RenderParams& rp) {
  return rp.activeCount ? uint64_t{rp.activeCount} : static_cast<uint64_t>(rp.width) * static_cast<uint64_t>(rp.height);
}

}  // namespace tracer

// @file gen_ggx_albedo_table.cpp: prints core/ggx_albedo_table.h, the GGX albedo tables of host/ggx_albedo.h.
//   build/gen_ggx_albedo_table [SAMPLES_PER_SIDE] > include/tracer/core/ggx_albedo_table.h
// (default 256 samples per side, 32 points per axis; a few minutes on one core). GgxAlbedoTable.* checks the
// checked-in header against a fresh computation.
#include <cstdio>
#include <cstdlib>

#include "tracer/host/ggx_albedo.h"

int main(int argc, char** argv) {
  const int res = 32;
  const int samples = argc > 1 ? std::atoi(argv[1]) : 256;
  if (samples < 8 || samples > 4096) {
    std::fprintf(stderr, "gen_ggx_albedo_table: SAMPLES_PER_SIDE must be in 8..4096, not '%s'\n", argv[1]);
    return 2;
  }
  const std::string text = tracer::GgxAlbedoTableHeader(tracer::ComputeGgxAlbedoTable(res, samples), res, samples);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

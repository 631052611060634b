// @file checkpoints.cpp: see checkpoints.h.
#include "app/checkpoints.h"

#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>

namespace tracer {

int CheckResumedHalves(const CliOptions& cli, const Checkpoint& resumed, const RenderOptions& opt) {
  // --denoise needs both halves of every sample so far: only a checkpoint of a --denoise render kept the odd ones.
  // (Without --denoise, odd sums in the checkpoint are left out, and so from the checkpoints this render saves.)
  if (opt.halfBuffers && resumed.film.odd.empty()) {
    std::cerr << "tracer: usage error: --resume " << cli.resumePath
              << ": the checkpoint keeps no odd samples' sums (it was saved by a render without --denoise, or by an "
                 "older tracer), so --denoise cannot continue it: resume it without --denoise, or render again with "
                 "--denoise --checkpoint FILE\n";
    return 2;
  }
  return kContinue;
}

int UseResumedFilm(const CliOptions& cli, const Checkpoint& resumed, const std::string& settings, RenderOptions& opt) {
  std::string diff = DescribeSettingsMismatch(resumed.settings, settings);
  if (!diff.empty() || resumed.film.width != opt.width || resumed.film.height != opt.height) {
    std::cerr << "tracer: usage error: --resume " << cli.resumePath
              << ": the checkpoint was rendered with different settings: " << (diff.empty() ? "image size" : diff)
              << "\n";
    return 2;
  }
  if (int code = CheckResumedHalves(cli, resumed, opt); code != kContinue) return code;
  opt.resume = &resumed.film;
  if (resumed.film.sppDone >= opt.spp)
    std::fprintf(stderr, "tracer: %s already holds %d spp (--spp %d); writing it as it is\n", cli.resumePath.c_str(),
                 resumed.film.sppDone, opt.spp);
  else if (!opt.quiet)
    std::fprintf(stderr, "resuming %s at %d of %d spp\n", cli.resumePath.c_str(), resumed.film.sppDone, opt.spp);
  return kContinue;
}

CheckpointFn PeriodicCheckpoint(const std::string& path, uint32_t seed, const std::string& settings, bool quiet) {
  auto failures = std::make_shared<int>(0);  // shared by every copy the driver may make of the callback
  return [path, seed, settings, failures, quiet](const HostFilm& film) {
    try {
      SaveCheckpoint(path, film, seed, settings);
    } catch (const std::exception& e) {
      if ((*failures)++ == 0 && !quiet) std::fprintf(stderr, "\ntracer: warning: %s\n", e.what());
    }
  };
}

}  // namespace tracer

// @file finish_render.cpp: see finish_render.h.
#include "app/finish_render.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <vector>

#include "tracer/host/checkpoint.h"
#include "tracer/host/image_io.h"
#include "tracer/host/version.h"

namespace tracer {
namespace {

// Empty when the render found no non-finite sample; else the message naming its pixel and depth.
std::string NonFiniteReport(const RenderResult& result) {
  const NonFiniteSample& nf = result.firstNonFinite;
  if (!nf.found) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "non-finite sample at pixel (%u, %u), path depth %u",
                nf.pixel % static_cast<uint32_t>(result.width), nf.pixel / static_cast<uint32_t>(result.width),
                nf.depth);
  return buf;
}

// 1 when there is no image to write (--check-nan found a non-finite sample, or no pass finished), 128 + `signal`
// when a signal stopped the render before its first pass; else kContinue.
int RefuseNoImage(const CliOptions& cli, const RenderResult& result, int signal) {
  if (cli.checkNan) {
    std::string nf = NonFiniteReport(result);
    if (!nf.empty()) {
      std::cerr << "tracer: error: --check-nan: " << nf << "; no image written\n";
      return 1;
    }
  }
  if (result.sppDone <= 0) {
    std::cerr << "tracer: interrupted before the first pass finished; no image written\n";
    return signal ? 128 + signal : 1;
  }
  return kContinue;
}

// The image and --aov's outputs: layers of an .exr, else PFM files beside the image (1-channel depth as grey RGB),
// written before it, so that a failure among them leaves no new image behind. Returns how many files beside it.
int WriteImages(const CliOptions& cli, const RenderResult& result, const std::string& settings, const AovImages& aov) {
  ImageExtras extras;  // (EXR keeps them: what the image is, and how it was made)
  extras.half = cli.exrHalf;
  extras.attributes = {{"tracer:version", VersionString()},
                       {"tracer:scene", cli.scenePath},
                       {"tracer:spp", std::to_string(result.sppDone)},
                       {"tracer:backend", result.backend},
                       {"tracer:settings", settings}};
  const std::vector<ImageLayer> layers = AovLayers(aov, cli.aovKinds);
  const bool exr = FormatFromPath(cli.outPath) == ImageFormat::kExr;
  if (exr) extras.layers = layers;
  if (!exr)
    for (const ImageLayer& layer : layers) {
      std::vector<float> rgb(static_cast<size_t>(result.width) * result.height * 3);
      const size_t n = layer.channels.size();
      for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = (*layer.values)[(i / 3) * n + (n == 3 ? i % 3 : 0)];
      const std::string path = AovSiblingPath(cli.outPath, layer.name);
      WriteImage(path, rgb, result.width, result.height);
      if (cli.Details()) std::fprintf(stderr, "wrote %s\n", path.c_str());
    }
  WriteImage(cli.outPath, result.rgb, result.width, result.height, cli.exposure, extras);
  return exr ? 0 : static_cast<int>(layers.size());
}

// The warnings about the written image, after the summary (none under --quiet).
void WarnAboutTheImage(const CliOptions& cli, const RenderResult& result, const std::string& interiorFlags) {
  if (cli.render.quiet) return;
  if (std::all_of(result.rgb.begin(), result.rgb.end(), [](float v) { return v == 0.0f; }))
    std::fprintf(stderr,
                 "tracer: warning: the image is entirely black: no pixel received any light. Check the camera %s: an "
                 "interior needs a camera inside it, such as %s; a scene without emitters needs --env R,G,B or "
                 "--env-map FILE.hdr\n",
                 cli.Details() ? "printed above" : "(--verbose prints it)", interiorFlags.c_str());
  if (result.stats.droppedSamples)
    std::fprintf(stderr, "tracer: warning: %llu non-finite samples were dropped\n",
                 static_cast<unsigned long long>(result.stats.droppedSamples));
}

}  // namespace

int FinishRender(const CliOptions& cli, const RenderResult& result, const std::string& settings, int startSpp,
                 int signal, RenderTimes times, const std::string& interiorFlags, const AovImages& aov) {
  const RenderOptions& opt = cli.render;
  if (int code = RefuseNoImage(cli, result, signal); code != kContinue) return code;
  // The checkpoint first: it can reproduce the image, the image cannot reproduce it.
  std::string checkpointError;
  if (!cli.checkpointPath.empty()) {
    try {
      SaveCheckpoint(cli.checkpointPath, result.film, opt.seed, settings);
    } catch (const std::exception& e) {
      checkpointError = e.what();
    }
  }
  const Stopwatch writeClock;
  RenderWrites writes;
  writes.aovFiles = WriteImages(cli, result, settings, aov);
  writes.checkpointSaved = !cli.checkpointPath.empty() && checkpointError.empty();
  times.write = writeClock.Seconds();
  if ((cli.aovKinds & kAovVariance) && result.varianceBatches < 2 && !opt.quiet)
    std::fprintf(stderr,
                 "tracer: warning: --aov variance needs at least 2 passes; this render had %d, so the variance is "
                 "written as 0 (raise --spp, or --time if it stopped the render)\n",
                 result.varianceBatches);
  if (!opt.quiet) PrintSummary(cli, result, startSpp, writes, times);
  WarnAboutTheImage(cli, result, interiorFlags);
  if (!checkpointError.empty()) {
    std::cerr << "tracer: error: " << checkpointError << "\n";
    return 1;
  }
  if (signal) {
    std::fprintf(stderr, "tracer: interrupted at %d of %d spp; wrote the image so far to %s%s%s\n", result.sppDone,
                 opt.spp, cli.outPath.c_str(), cli.checkpointPath.empty() ? "" : " and the checkpoint to ",
                 cli.checkpointPath.c_str());
    return 128 + signal;
  }
  if (result.sppDone < opt.spp && !result.converged && !opt.quiet)
    std::fprintf(stderr, "stopped by --time after %d of %d spp\n", result.sppDone, opt.spp);
  return 0;
}

}  // namespace tracer

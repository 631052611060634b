// @file finish_render.cpp: see finish_render.h.
#include "app/finish_render.h"

#include <algorithm>
#include <cmath>
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

// Why an image may be dark, as far as the probe before the render knows: only what is true of this scene and camera.
std::string WhyDark(const CliOptions& cli, const CameraDiagnosis& d) {
  if (d.backFaces)
    return "The camera most likely looks at the back of the scene's triangles (warned above): " +
           (d.suggestion.empty() ? d.why : "try " + d.suggestion);
  if (!d.emitters && !d.environment)
    return "The scene has no emitters (Ke in the MTL): pass --env R,G,B or --env-map FILE (.hdr or .exr), or add an "
           "emitter";
  if (d.enclosed)
    return "The scene has no emitters and the camera is enclosed (inside a closed room or object), where the "
           "environment cannot reach: add an emitter (Ke in the MTL) or open the room";
  if (d.probe.hits == 0)
    return std::string("The camera sees none of the scene: check --eye/--look-at (") +
           (cli.Details() ? "the camera and bounds are printed above)" : "--verbose prints the camera and bounds)");
  return std::string(
             "The light that reaches the camera is very weak: check the emitters' Ke, --env, --exposure, or "
             "whether the lights are hidden from the camera (") +
         (cli.Details() ? "the camera is printed above)" : "--verbose prints the camera)");
}

// The warnings about the written image, after the summary (none under --quiet). Nearly black: a mean below 1e-4
// (linear, after --exposure), darker than 1/255 in an 8-bit image; real dark renders (a night scene, a dim room)
// are brighter than that by far.
void WarnAboutTheImage(const CliOptions& cli, const RenderResult& result, const CameraDiagnosis& camera) {
  if (cli.render.quiet) return;
  const double scale = std::exp2(static_cast<double>(cli.exposure));
  double sum = 0.0;
  size_t lit = 0;  // pixels brighter than 1/255 in any channel
  for (size_t i = 0; i < result.rgb.size(); i += 3) {
    const double r = result.rgb[i], g = result.rgb[i + 1], b = result.rgb[i + 2];
    sum += r + g + b;
    lit += std::max({r, g, b}) * scale > 1.0 / 255.0;
  }
  const double mean = result.rgb.empty() ? 0.0 : sum * scale / static_cast<double>(result.rgb.size());
  if (sum == 0.0)
    std::fprintf(stderr, "tracer: warning: the image is entirely black: no pixel received any light. %s\n",
                 WhyDark(cli, camera).c_str());
  else if (mean < 1e-4)
    std::fprintf(stderr,
                 "tracer: warning: the image is nearly black (mean value %.2g; %zu of %zu pixels brighter than "
                 "1/255). %s\n",
                 mean, lit, result.rgb.size() / 3, WhyDark(cli, camera).c_str());
  if (result.stats.droppedSamples)
    std::fprintf(stderr, "tracer: warning: %llu non-finite samples were dropped\n",
                 static_cast<unsigned long long>(result.stats.droppedSamples));
}

}  // namespace

int FinishRender(const CliOptions& cli, const RenderResult& result, const std::string& settings, int startSpp,
                 int signal, RenderTimes times, const CameraDiagnosis& camera, const AovImages& aov) {
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
  WarnAboutTheImage(cli, result, camera);
  if (!checkpointError.empty()) {
    std::cerr << "tracer: error: " << checkpointError << "\n";
    return 1;
  }
  if (signal) {
    // Without --checkpoint the samples are lost with the process: say how to keep them next time.
    std::fprintf(stderr, "tracer: interrupted at %d of %d spp; wrote the image so far to %s%s%s\n", result.sppDone,
                 opt.spp, cli.outPath.c_str(),
                 cli.checkpointPath.empty() ? "; this render cannot be resumed: to resume a render later, run it with "
                                              "--checkpoint FILE (then --resume FILE continues it)"
                                            : " and the checkpoint to ",
                 cli.checkpointPath.c_str());
    return 128 + signal;
  }
  if (result.sppDone < opt.spp && !result.converged && !opt.quiet)
    std::fprintf(stderr, "stopped by --time after %d of %d spp\n", result.sppDone, opt.spp);
  return 0;
}

}  // namespace tracer

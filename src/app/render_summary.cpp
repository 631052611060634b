// @file render_summary.cpp: see render_summary.h.
#include "app/render_summary.h"

#include <algorithm>
#include <cstdio>

namespace tracer {
namespace {

// The samples this run rendered (not those a resumed checkpoint brought); with --adaptive, each pixel's own, after
// saying how they compare with a uniform render's.
double SamplesRendered(const CliOptions& cli, const RenderResult& result, int startSpp) {
  const double pixels = static_cast<double>(result.width) * result.height;
  if (result.film.pixelSpp.empty()) return pixels * std::max(0, result.sppDone - startSpp);
  double samples = 0.0;
  for (uint32_t n : result.film.pixelSpp) samples += n;
  std::fprintf(
      stderr, "adaptive sampling: %.1f spp on average (from %d to %d), %.1f%% of a uniform render's %d spp%s\n",
      samples / pixels, *std::min_element(result.film.pixelSpp.begin(), result.film.pixelSpp.end()), result.sppDone,
      100.0 * samples / (pixels * cli.render.spp), cli.render.spp, result.converged ? "; every pixel converged" : "");
  return samples;
}

// "a mean of 238.4 and at most 256": an adaptive render's samples per pixel.
std::string AdaptiveSpp(const RenderResult& result, double samples) {
  char text[96];
  std::snprintf(text, sizeof text, "a mean of %.1f and at most %d",
                samples / (static_cast<double>(result.width) * result.height),
                *std::max_element(result.film.pixelSpp.begin(), result.film.pixelSpp.end()));
  return text;
}

// The --verbose summary: the rays of each kind, the write, and where the time to image went.
void PrintDetailedSummary(const CliOptions& cli, const RenderResult& result, double samples, const std::string& spp,
                          const std::string& notes, const RenderWrites& writes, const RenderTimes& times) {
  const RenderStats& st = result.stats;
  char frame[160] = "";
  if (times.frame > 0.0)
    std::snprintf(frame, sizeof frame, " (%.2fs from the end of the build; set-up %.3fs, path pool and film %.3fs)",
                  times.frame, st.setupSeconds, st.allocateSeconds);
  std::fprintf(stderr,
               "rendered on %s: %s spp%s in %.2fs%s, %.2f M samples/s, %.1f M rays/s (%.1f M extension, %.1f M "
               "shadow)\n",
               result.backend.c_str(), spp.c_str(), notes.c_str(), st.seconds, frame, samples / st.seconds / 1e6,
               (st.extensionRays + st.shadowRays) / st.seconds / 1e6, st.extensionRays / st.seconds / 1e6,
               st.shadowRays / st.seconds / 1e6);
  if (times.denoise > 0.0)
    std::fprintf(stderr,
                 "denoised (%s) in %.1f ms: first-hit features %.1f ms, half-buffers %.1f ms, filter %.1f ms, image "
                 "read back %.1f ms\n",
                 DenoiseMethodName(cli.denoiseMethod), times.denoise * 1e3, times.denoiseParts.features,
                 times.denoiseParts.inputs, times.denoiseParts.filter, times.denoiseParts.readback);
  std::fprintf(stderr, "wrote %s in %.2fs\n", cli.outPath.c_str(), times.write);
  if (times.frame > 0.0 && times.command) {
    const double total = times.command->Seconds();
    // (the frame holds the set-up ... the resolve)
    const double parts = times.load + times.frame + times.denoise + times.write;
    char denoise[48] = "";
    if (times.denoise > 0.0) std::snprintf(denoise, sizeof denoise, ", denoise %.3fs", times.denoise);
    std::fprintf(stderr,
                 "time to image %.2fs: loading and BVH build %.2fs, set-up %.3fs, path pool and film %.3fs, render "
                 "%.2fs (final film readback %.3fs), resolve %.3fs%s, write %.2fs, the rest %.2fs (start-up, GPU "
                 "context, AOVs)\n",
                 total, times.load, st.setupSeconds, st.allocateSeconds, st.seconds, st.readbackSeconds,
                 st.resolveSeconds, denoise, times.write, std::max(0.0, total - parts));
  }
  if (writes.checkpointSaved)
    std::fprintf(stderr, "saved checkpoint %s (%d spp)\n", cli.checkpointPath.c_str(), result.sppDone);
}

}  // namespace

void PrintRenderStart(const CliOptions& cli, size_t triangles, const std::string& where) {
  if (cli.render.quiet) return;
  std::fprintf(stderr, "rendering %s (%zu triangles) at %dx%d, %d spp, %s\n", cli.scenePath.c_str(), triangles,
               cli.render.width, cli.render.height, cli.render.spp, where.c_str());
}

void PrintSummary(const CliOptions& cli, const RenderResult& result, int startSpp, const RenderWrites& writes,
                  const RenderTimes& times) {
  const double samples = SamplesRendered(cli, result, startSpp);
  const std::string notes = startSpp > 0 ? " (" + std::to_string(startSpp) + " from the checkpoint)" : "";
  // --adaptive: the pixels stopped at different counts; the most any pixel got is not what the render cost.
  const std::string spp = result.film.pixelSpp.empty() ? std::to_string(result.sppDone) : AdaptiveSpp(result, samples);
  if (cli.Details()) {
    PrintDetailedSummary(cli, result, samples, spp, notes, writes, times);
    return;
  }
  const RenderStats& st = result.stats;
  std::string also;
  if (writes.aovFiles > 0) also += ", " + std::to_string(writes.aovFiles) + " AOV files beside it";
  if (writes.checkpointSaved) also += " and the checkpoint " + cli.checkpointPath;
  char denoised[64] = "";
  if (times.denoise > 0.0)
    std::snprintf(denoised, sizeof denoised, "; denoised (%s) in %.2fs", DenoiseMethodName(cli.denoiseMethod),
                  times.denoise);
  std::fprintf(stderr, "rendered on %s: %s spp%s in %.2fs, %.2f M samples/s, %.1f M rays/s%s; wrote %s%s\n",
               result.backend.c_str(), spp.c_str(), notes.c_str(), st.seconds, samples / st.seconds / 1e6,
               (st.extensionRays + st.shadowRays) / st.seconds / 1e6, denoised, cli.outPath.c_str(), also.c_str());
}

}  // namespace tracer

// @file progress.cpp: see progress.h.
#include "app/progress.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tracer {
namespace {

volatile std::sig_atomic_t gSignal = 0;
void OnSignal(int sig) {
  if (gSignal != 0) std::_Exit(128 + sig);  // a second signal: stop at once
  gSignal = sig;
}

std::string FormatDuration(double s) {
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  else
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return buf;
}

}  // namespace

void CatchStopSignals() {
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
}

int StopSignal() { return static_cast<int>(gSignal); }

ProgressFn ProgressBar(bool showBar, int startSpp) {
  return [showBar, startSpp](int done, int total, const RenderStats& st) {
    if (showBar) {
      double rays = static_cast<double>(st.extensionRays + st.shadowRays);
      double eta = done > startSpp ? st.seconds * (total - done) / (done - startSpp) : 0.0;
      int width = 30, filled = static_cast<int>(width * static_cast<double>(done) / total);
      std::fprintf(stderr, "\r[%s%s] %d/%d spp  %.1f Mrays/s  ETA %s   ", std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), done, total, rays / std::max(st.seconds, 1e-9) / 1e6,
                   FormatDuration(eta).c_str());
      std::fflush(stderr);
    }
    return gSignal == 0;
  };
}

}  // namespace tracer

// @file image_write_bench.cpp: times WriteImage on a synthetic render-like frame (not a test; run by hand).
//
//   build/tests/image_write_bench [width height]   (default 7680 4320, 8K UHD)
//
// The frame is smooth gradients plus per-pixel noise and a few bright pixels, because that is what a
// path-traced render looks like to an encoder: a flat or pure-gradient image compresses far better and
// faster than a real one, and white noise far worse, so either would give a misleading time.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tracer/host/image_io.h"

namespace {

std::vector<float> SyntheticFrame(int w, int h) {
  std::vector<float> rgb(static_cast<size_t>(w) * h * 3);
  uint32_t state = 12345u;
  auto next = [&state]() {  // xorshift32: fixed sequence, so every run writes the same bytes
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return static_cast<float>(state >> 8) * (1.0f / 16777216.0f);
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float u = static_cast<float>(x) / w, v = static_cast<float>(y) / h;
      const float base[3] = {0.6f * u * v + 0.05f, 0.4f * (1.0f - v) + 0.1f * u, 0.3f + 0.2f * std::sin(6.0f * u)};
      const float noise = 0.25f * (next() - 0.5f);  // a few-spp Monte Carlo error, relative
      const bool firefly = next() < 0.001f;
      for (int c = 0; c < 3; ++c) {
        float value = base[c] * (1.0f + noise);
        if (firefly) value = 8.0f;
        rgb[(static_cast<size_t>(y) * w + x) * 3 + c] = value;
      }
    }
  return rgb;
}

}  // namespace

int main(int argc, char** argv) {
  const int w = argc > 2 ? std::atoi(argv[1]) : 7680;
  const int h = argc > 2 ? std::atoi(argv[2]) : 4320;
  if (w <= 0 || h <= 0) {
    std::fprintf(stderr, "usage: %s [width height]\n", argv[0]);
    return 2;
  }
  const std::vector<float> rgb = SyntheticFrame(w, h);
  for (const char* ext : {"png", "hdr", "pfm", "exr"}) {
    if (std::string(ext) == "exr" && !tracer::ExrSupported()) continue;
    const std::string path = "image_write_bench." + std::string(ext);
    const auto t0 = std::chrono::steady_clock::now();
    tracer::WriteImage(path, rgb, w, h);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::FILE* f = std::fopen(path.c_str(), "rb");
    long bytes = 0;
    if (f && std::fseek(f, 0, SEEK_END) == 0) bytes = std::ftell(f);
    if (f) std::fclose(f);
    std::printf("%dx%d %s: %.3f s, %.1f MB\n", w, h, ext, s, bytes / 1e6);
    std::remove(path.c_str());
  }
  return 0;
}

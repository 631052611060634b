// @file checkpoint.h: saving a render's film to disk and reading it back, so a long render survives an
// interruption and `--resume` continues it to the image an uninterrupted render would have given.
//
// File layout (version 2, all integers little-endian):
//
//   offset  size  field
//        0     8  magic "TRACERCK"
//        8     4  version          (2; version 1 files, written before the flags, are still read)
//       12     4  width            (1 .. 32768, width*height <= kMaxFilmPixels)
//       16     4  height
//       20     4  sppDone          (>= 0)
//       24     4  seed
//       28     4  settings length  (bytes, <= kMaxSettingsBytes)
//       32     8  settings hash    (HashBytes of the settings text)
//       40     8  dropped          (non-finite samples dropped so far)
//       48     4  flags            (kCheckpointOddSums or 0; no other bit is defined)
//       52     4  reserved         (0)
//       56     L  settings text    ("key=value" lines: everything that decides the image; see CheckpointSettings)
//     56+L  24wh  film sums        (uint64, 3 per pixel, row 0 at the top, fixed point as HostFilm)
//  56+L+24wh 24wh odd sums         (only with kCheckpointOddSums: the odd-numbered samples' sums, HostFilm::odd,
//                                   laid out as the film sums; each at most its film sum)
//  end - 8     8  checksum         (HashBytes of every byte before it)
//
// Version 1 is the same without the flags and the reserved word (the settings text at 48) and never has odd sums.
// The odd sums are --denoise's half-buffers: a render that keeps them (RenderOptions::halfBuffers) saves them, and
// only a checkpoint with them can continue such a render.
//
// The file's size follows from the header, so a reader checks it before allocating anything, and a
// truncated or padded file is refused without reading the film.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "tracer/host/film.h"
#include "tracer/host/hasher.h"

namespace tracer {

struct SceneData;
struct RenderOptions;

// Any problem with a checkpoint file. what() starts with the file's path.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr uint32_t kCheckpointVersion = 2;
// The flags word's bits (version 2).
constexpr uint32_t kCheckpointOddSums = 1u;  // the odd samples' sums follow the film sums
// The largest film the CLI renders and a checkpoint may hold: 2^28 pixels is 6 GiB of fixed-point sums,
// and keeps width*height*3 far from overflowing 32-bit sample and pixel indices.
constexpr int64_t kMaxFilmPixels = int64_t(1) << 28;
constexpr int kMaxFilmSide = 32768;
constexpr uint32_t kMaxSettingsBytes = 1u << 20;

struct Checkpoint {
  HostFilm film;  // film.odd: the odd samples' sums when the file holds them, else empty
  uint32_t seed = 0;
  std::string settings;  // "key=value" lines, one per setting that must match on resume
};

// Writes the checkpoint through a temporary file in the same folder, flushed to disk, then renamed over
// path, so path always holds either the previous checkpoint or the new one, never a torn file. The odd samples'
// sums are written when film.odd is not empty (it must then be as long as film.sum).
// Throws CheckpointError naming path.
void SaveCheckpoint(const std::string& path, const Checkpoint& checkpoint);
void SaveCheckpoint(const std::string& path, const HostFilm& film, uint32_t seed, const std::string& settings);

// Reads and validates everything (magic, version, flags, sizes, settings hash, checksum, odd sums within the
// sums). Throws CheckpointError with a message that names path and what is wrong. film.odd holds the odd
// samples' sums where the file has them (kCheckpointOddSums), else it is empty.
Checkpoint LoadCheckpoint(const std::string& path);

// Compares two settings texts key by key. Empty when they are equal; otherwise one "key: X in the
// checkpoint, Y now" part per difference, joined by "; ", where a different scene-content is told by the input that
// changed (the environment map's scale or file, the materials, the textures, else the geometry) where the
// explaining lines of CheckpointSettings allow.
std::string DescribeSettingsMismatch(const std::string& saved, const std::string& now);

// The settings text a checkpoint must match to be resumed: everything that decides the image apart from the
// sample count (scene file and content, image size, seed, depths, clamp, environment, camera, light sampling).
// Pool size, threads, backend and the naive/optimised GPU variants are left out: they change the speed, not
// the samples taken.
// The scene's content enters as SceneContentHash (host/scene_data.h): every array the renderer reads, so an
// edited OBJ, MTL or texture is noticed even where the OBJ's size stays the same.
//
// Lines that only explain scene-content, so that a refused resume can say which input changed: the hashes of the
// materials, the textures and the environment map's texels (`scene-content-parts`), and the map's path and scale
// (`env-map`, `env-scale`, from `envMap`). They never refuse a resume on their own, and older checkpoints without
// them still resume.
struct EnvMapSource {
  std::string path;    // --env-map as given; empty without a map
  float scale = 1.0f;  // --env-scale
};
std::string CheckpointSettings(const std::string& scenePath, const SceneData& data, const RenderOptions& opt,
                               const EnvMapSource& envMap = {});

}  // namespace tracer

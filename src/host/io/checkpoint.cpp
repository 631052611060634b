// @file checkpoint.cpp: the checkpoint file (layout in checkpoint.h): atomic writes, validating reads, and
// the settings text that says which render a checkpoint belongs to.
#include "tracer/host/checkpoint.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "tracer/host/file_util.h"
#include "tracer/host/render_options.h"
#include "tracer/host/scene_data.h"

namespace tracer {

// The film is written and read with memcpy-style block I/O; a big-endian host would need byte swaps.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "checkpoint I/O assumes a little-endian host");

namespace {

constexpr char kMagic[8] = {'T', 'R', 'A', 'C', 'E', 'R', 'C', 'K'};
constexpr size_t kHeaderBytes = 56;    // version 2: with the flags and the reserved word
constexpr size_t kHeaderV1Bytes = 48;  // version 1: the fields both versions share

void PutU32(unsigned char* p, uint32_t v) { std::memcpy(p, &v, 4); }
void PutU64(unsigned char* p, uint64_t v) { std::memcpy(p, &v, 8); }
uint32_t GetU32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t GetU64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

[[noreturn]] void Fail(const std::string& path, const std::string& message) {
  throw CheckpointError(path + ": " + message);
}

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Reads exactly n bytes and feeds them to the checksum.
void ReadExact(std::FILE* f, void* dst, size_t n, Hasher* hash, const std::string& path) {
  if (n && std::fread(dst, 1, n, f) != n)
    Fail(path, std::feof(f) ? std::string("read failed: the file got shorter while it was read")
                            : std::string("read failed (") + std::strerror(errno) + ")");
  if (hash) hash->Update(dst, n);
}

// Writes the header, settings, film sums, odd sums (where the film has them) and checksum to tmp. Returns nullptr, or
// the step that failed with errno set to its error (restored after the FILE is closed, which could overwrite it).
const char* WriteCheckpointFile(const std::string& tmp, const unsigned char* header, const std::string& settings,
                                const HostFilm& film) {
  File f(std::fopen(tmp.c_str(), "wb"));
  if (!f) return "cannot create a temporary file beside it";
  Hasher hash;
  auto put = [&](const void* data, size_t n) {
    if (n && std::fwrite(data, 1, n, f.get()) != n) return false;
    hash.Update(data, n);
    return true;
  };
  auto failed = [&](const char* step) {
    const int err = errno;
    f.reset();
    errno = err;
    return step;
  };
  if (!put(header, kHeaderBytes) || !put(settings.data(), settings.size()) ||
      !put(film.sum.data(), film.sum.size() * sizeof(unsigned long long)) ||
      !put(film.odd.data(), film.odd.size() * sizeof(unsigned long long)))  // (empty without kCheckpointOddSums)
    return failed("write failed");
  unsigned char check[8];
  PutU64(check, hash.Digest());
  if (!put(check, 8)) return failed("write failed");
  if (std::fflush(f.get()) != 0) return failed("flush failed");
  if (std::fclose(f.release()) != 0) return "close failed";
  return nullptr;
}

// "key=value" lines to a map; lines without '=' are kept whole as keys.
std::map<std::string, std::string> ParseSettings(const std::string& text) {
  std::map<std::string, std::string> kv;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos)
      kv[line] = "";
    else
      kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return kv;
}

}  // namespace

// ---- writing ----------------------------------------------------------------------------------------------
void SaveCheckpoint(const std::string& path, const HostFilm& film, uint32_t seed, const std::string& settings) {
  // Refuse to write what LoadCheckpoint would refuse to read.
  const int64_t pixels = static_cast<int64_t>(film.width) * film.height;
  if (film.width < 1 || film.height < 1 || film.width > kMaxFilmSide || film.height > kMaxFilmSide ||
      pixels > kMaxFilmPixels)
    Fail(path, "cannot save a film of " + std::to_string(film.width) + "x" + std::to_string(film.height));
  if (film.sum.size() != static_cast<size_t>(pixels) * 3) Fail(path, "film size does not match its width and height");
  if (!film.odd.empty() && film.odd.size() != film.sum.size())
    Fail(path, "the odd samples' sums do not match the film's size");
  if (film.sppDone < 0) Fail(path, "negative sample count");
  if (settings.size() > kMaxSettingsBytes) Fail(path, "settings text too long");

  unsigned char header[kHeaderBytes];
  std::memcpy(header, kMagic, 8);
  PutU32(header + 8, kCheckpointVersion);
  PutU32(header + 12, static_cast<uint32_t>(film.width));
  PutU32(header + 16, static_cast<uint32_t>(film.height));
  PutU32(header + 20, static_cast<uint32_t>(film.sppDone));
  PutU32(header + 24, seed);
  PutU32(header + 28, static_cast<uint32_t>(settings.size()));
  PutU64(header + 32, HashString(settings));
  PutU64(header + 40, film.dropped);
  PutU32(header + 48, film.odd.empty() ? 0u : kCheckpointOddSums);
  PutU32(header + 52, 0u);  // reserved

  // Only the file's bytes are written here; AtomicWriteFile makes the write atomic and durable.
  const char* failedStep = nullptr;
  try {
    AtomicWriteFile(path, [&](const std::string& tmp) {
      failedStep = WriteCheckpointFile(tmp, header, settings, film);
      return failedStep == nullptr;
    });
  } catch (const std::runtime_error& e) {
    // e.what() is "<path>: <what> (<strerror>)"; name the step that failed where the writer knows it.
    std::string detail = e.what();
    if (detail.compare(0, path.size() + 2, path + ": ") == 0) detail.erase(0, path.size() + 2);
    const std::string generic = "cannot write";
    if (failedStep && detail.compare(0, generic.size() + 2, generic + " (") == 0)
      detail = failedStep + detail.substr(generic.size());
    Fail(path, "cannot write checkpoint: " + detail);
  }
}

void SaveCheckpoint(const std::string& path, const Checkpoint& c) { SaveCheckpoint(path, c.film, c.seed, c.settings); }

// ---- reading ----------------------------------------------------------------------------------------------
namespace {

// A header's fields, each checked, and the size of the header itself (it differs between the versions).
struct Header {
  uint32_t version = 0, seed = 0, settingsBytes = 0, flags = 0;
  int64_t width = 0, height = 0, spp = 0;
  uint64_t settingsHash = 0, dropped = 0;
  size_t bytes = 0;
};

// Reads and checks the header: the fields both versions share, then version 2's flags and reserved word.
Header ReadHeader(std::FILE* f, uint64_t fileBytes, Hasher& hash, const std::string& path) {
  unsigned char raw[kHeaderBytes];
  ReadExact(f, raw, kHeaderV1Bytes, &hash, path);
  if (std::memcmp(raw, kMagic, 8) != 0) Fail(path, "not a tracer checkpoint (wrong magic bytes)");
  Header h;
  h.version = GetU32(raw + 8);
  if (h.version != 1 && h.version != kCheckpointVersion)
    Fail(path, "checkpoint version " + std::to_string(h.version) + "; this build reads versions 1 to " +
                   std::to_string(kCheckpointVersion));
  h.width = static_cast<int32_t>(GetU32(raw + 12));
  h.height = static_cast<int32_t>(GetU32(raw + 16));
  h.spp = static_cast<int32_t>(GetU32(raw + 20));
  if (h.width < 1 || h.height < 1 || h.width > kMaxFilmSide || h.height > kMaxFilmSide ||
      h.width * h.height > kMaxFilmPixels)
    Fail(path, "corrupt header: image size " + std::to_string(h.width) + "x" + std::to_string(h.height));
  if (h.spp < 0) Fail(path, "corrupt header: negative sample count " + std::to_string(h.spp));
  h.seed = GetU32(raw + 24);
  h.settingsBytes = GetU32(raw + 28);
  if (h.settingsBytes > kMaxSettingsBytes)
    Fail(path, "corrupt header: settings length " + std::to_string(h.settingsBytes));
  h.settingsHash = GetU64(raw + 32);
  h.dropped = GetU64(raw + 40);
  h.bytes = h.version == 1 ? kHeaderV1Bytes : kHeaderBytes;
  if (h.version == 1) return h;
  if (fileBytes < kHeaderBytes + 8)
    Fail(path, "truncated: " + std::to_string(fileBytes) + " bytes, less than a version-2 header and checksum");
  ReadExact(f, raw + kHeaderV1Bytes, kHeaderBytes - kHeaderV1Bytes, &hash, path);
  h.flags = GetU32(raw + 48);
  if (h.flags & ~kCheckpointOddSums) Fail(path, "corrupt header: unknown flags " + std::to_string(h.flags));
  if (GetU32(raw + 52) != 0) Fail(path, "corrupt header: the reserved word is not 0");
  return h;
}

}  // namespace

Checkpoint LoadCheckpoint(const std::string& path) {
  // Regular files only: a FIFO would block and /dev/zero would never end.
  struct stat st;
  if (stat(path.c_str(), &st) != 0) Fail(path, std::string("cannot open checkpoint (") + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode)) Fail(path, "not a regular file");
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) Fail(path, std::string("cannot open checkpoint (") + std::strerror(errno) + ")");
  const uint64_t fileBytes = static_cast<uint64_t>(st.st_size);
  if (fileBytes < kHeaderV1Bytes + 8)
    Fail(path, "not a tracer checkpoint (only " + std::to_string(fileBytes) + " bytes)");

  Hasher hash;
  const Header h = ReadHeader(f.get(), fileBytes, hash, path);
  // The header fixes the size, the odd sums included; check it before allocating the film.
  const bool odd = (h.flags & kCheckpointOddSums) != 0;
  const size_t values = static_cast<size_t>(h.width * h.height) * 3;
  const uint64_t sumBytes = values * sizeof(unsigned long long);
  const uint64_t expected = h.bytes + h.settingsBytes + sumBytes * (odd ? 2 : 1) + 8;
  if (fileBytes < expected)
    Fail(path, "truncated: " + std::to_string(fileBytes) + " bytes, a " + std::to_string(h.width) + "x" +
                   std::to_string(h.height) + " checkpoint" + (odd ? " with odd samples' sums" : "") + " has " +
                   std::to_string(expected));
  if (fileBytes > expected)
    Fail(path, std::to_string(fileBytes - expected) + " unexpected bytes after the checkpoint's end");

  Checkpoint c;
  c.seed = h.seed;
  c.settings.resize(h.settingsBytes);
  ReadExact(f.get(), c.settings.data(), h.settingsBytes, &hash, path);
  c.film.width = static_cast<int>(h.width);
  c.film.height = static_cast<int>(h.height);
  c.film.sppDone = static_cast<int>(h.spp);
  c.film.dropped = h.dropped;
  c.film.sum.resize(values);
  ReadExact(f.get(), c.film.sum.data(), sumBytes, &hash, path);
  if (odd) {
    c.film.odd.resize(values);
    ReadExact(f.get(), c.film.odd.data(), sumBytes, &hash, path);
  }
  unsigned char check[8];
  ReadExact(f.get(), check, 8, nullptr, path);
  if (GetU64(check) != hash.Digest()) Fail(path, "checksum mismatch: the checkpoint is corrupt");
  // Covered by the checksum unless the writer itself was wrong; cheap, so check anyway.
  if (h.settingsHash != HashString(c.settings)) Fail(path, "settings hash does not match the settings text");
  for (size_t i = 0; i < c.film.odd.size(); ++i)  // (every odd sample is in the sums too)
    if (c.film.odd[i] > c.film.sum[i])
      Fail(path,
           "the odd samples' sums exceed the film's (value " + std::to_string(i) + "): the checkpoint is corrupt");
  return c;
}

namespace {

// The lines that only explain scene-content (CheckpointSettings): never a difference of their own.
bool ExplainsSceneContent(const std::string& key) {
  return key == "scene-content-parts" || key == "env-map" || key == "env-scale" || key == "scene-layout";
}

// "materials:H,textures:H,environment-map:H" to a map.
std::map<std::string, std::string> ParseParts(const std::string& text) {
  std::map<std::string, std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    const size_t colon = part.find(':');
    if (colon != std::string::npos) parts[part.substr(0, colon)] = part.substr(colon + 1);
  }
  return parts;
}

// Which input changed, when scene-content differs: from the explaining lines both texts hold.
std::string SceneContentDifference(const std::map<std::string, std::string>& a,
                                   const std::map<std::string, std::string>& b) {
  auto value = [](const std::map<std::string, std::string>& m, const char* key) {
    auto it = m.find(key);
    return it == m.end() ? std::string("none") : it->second;
  };
  // A build that hashes scenes another way (SceneLayoutHash) gives another scene-content for the same scene: say so
  // rather than blame the scene (a checkpoint from before the layout line has none, and is also another build's).
  if (b.count("scene-layout") && value(a, "scene-layout") != value(b, "scene-layout"))
    return "the checkpoint was written by another build of tracer, which hashes scenes another way (scene layout " +
           value(a, "scene-layout") + " in the checkpoint, " + value(b, "scene-layout") +
           " in this build), so it cannot tell whether the scene changed; render again without --resume";
  std::vector<std::string> what;
  if (value(a, "env-map") != value(b, "env-map"))
    what.push_back("the environment map (--env-map) differs: " + value(a, "env-map") + " in the checkpoint, " +
                   value(b, "env-map") + " now");
  else if (value(a, "env-scale") != value(b, "env-scale"))
    what.push_back("the environment scale (--env-scale) differs: " + value(a, "env-scale") + " in the checkpoint, " +
                   value(b, "env-scale") + " now");
  if (!a.count("scene-content-parts") || !b.count("scene-content-parts")) {
    if (what.empty())
      what.push_back(
          "the scene file, its MTL files or textures, or the environment map or its scale changed (this "
          "checkpoint does not record which)");
  } else {
    const auto pa = ParseParts(a.at("scene-content-parts")), pb = ParseParts(b.at("scene-content-parts"));
    auto changed = [&](const char* part) { return pa.count(part) && pb.count(part) && pa.at(part) != pb.at(part); };
    const bool mapNamed = !what.empty();  // its file or scale, which change its texels
    if (changed("environment-map") && !mapNamed)
      what.push_back("the environment map's texels differ (its file changed)");
    if (changed("materials")) what.push_back("the materials differ (an MTL file changed)");
    if (changed("textures")) what.push_back("the textures differ (a texture image changed)");
    if (what.empty()) what.push_back("the geometry differs (the scene file's vertices, faces or groups changed)");
  }
  std::string out;
  for (const std::string& w : what) out += (out.empty() ? "" : ", and ") + w;
  return out;
}

}  // namespace

std::string DescribeSettingsMismatch(const std::string& saved, const std::string& now) {
  if (saved == now) return "";
  const auto a = ParseSettings(saved), b = ParseSettings(now);
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  // The scene's content first: what follows from it (the environment's share of light, say) is its consequence.
  if (a.count("scene-content") && b.count("scene-content") && a.at("scene-content") != b.at("scene-content"))
    add("scene-content: " + SceneContentDifference(a, b));
  for (const auto& [key, value] : a) {
    if (ExplainsSceneContent(key) || (key == "scene-content" && b.count(key))) continue;
    auto it = b.find(key);
    if (it == b.end())
      add(key + ": '" + value + "' in the checkpoint, not set now");
    else if (it->second != value)
      add(key + ": '" + value + "' in the checkpoint, '" + it->second + "' now");
  }
  for (const auto& [key, value] : b)
    if (!a.count(key) && !ExplainsSceneContent(key)) add(key + ": not in the checkpoint, '" + value + "' now");
  if (!out.empty()) return out;
  // Same keys and values: the same render, unless the text differs otherwise than in the explaining lines (order,
  // blank lines).
  auto essential = [](const std::string& text) {
    std::istringstream in(text);
    std::string kept;
    for (std::string line; std::getline(in, line);)
      if (!ExplainsSceneContent(line.substr(0, line.find('=')))) kept += line + "\n";
    return kept;
  };
  return essential(saved) == essential(now) ? "" : "the settings text differs";
}

// ---- what a checkpoint must agree on ------------------------------------------------------------------------
namespace {

std::string Fmt(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));  // 9 digits: exact for a float
  return buf;
}
std::string Fmt(Vec3 v) { return Fmt(v.x) + "," + Fmt(v.y) + "," + Fmt(v.z); }

}  // namespace

std::string CheckpointSettings(const std::string& scenePath, const SceneData& data, const RenderOptions& opt,
                               const EnvMapSource& envMap) {
  std::ostringstream s;
  char* real = realpath(scenePath.c_str(), nullptr);
  struct stat st;
  s << "scene=" << (real ? real : scenePath) << "\n";
  std::free(real);
  s << "scene-bytes=" << (stat(scenePath.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : -1) << "\n";
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(SceneContentHash(data)));
  s << "scene-content=" << hash << "\n";
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(SceneLayoutHash()));
  s << "scene-layout=" << hash << "\n";
  // Which part changed, when scene-content did (these arrays are small beside the geometry and the BVH).
  auto part = [&hash](const auto&... arrays) {
    Hasher h;
    (h.Update(arrays.data(), arrays.size() * sizeof(arrays[0])), ...);
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(h.Digest()));
    return std::string(hash);
  };
  s << "scene-content-parts=materials:" << part(data.materials) << ",textures:" << part(data.textures, data.texels)
    << ",environment-map:" << part(data.env.texels) << "\n";
  if (!envMap.path.empty()) {
    char* realMap = realpath(envMap.path.c_str(), nullptr);
    s << "env-map=" << (realMap ? realMap : envMap.path) << "\n"
      << "env-scale=" << Fmt(envMap.scale) << "\n";
    std::free(realMap);
  }
  s << "width=" << opt.width << "\n"
    << "height=" << opt.height << "\n";
  s << "seed=" << opt.seed << "\n";
  s << "max-depth=" << opt.maxDepth << "\n"
    << "roulette-depth=" << opt.rouletteDepth << "\n";
  s << "clamp=" << Fmt(opt.clamp) << "\n";
  s << "env=" << Fmt(data.environment) << "\n";
  // The map's texels are in scene-content; its rotation, and the environment's share of light selection, here
  // (only for scenes with an environment light, so that other checkpoints keep their settings).
  const EnvParams& env = data.env.params;
  if (env.width > 0) s << "env-map-rotation=" << Fmt(env.cosRot) << "," << Fmt(env.sinRot) << "\n";
  // --env-sampling portals on a scene without portals samples as importance, and says so, as before portals were.
  const bool portals = opt.envSampling == EnvSampling::kPortals && !data.portals.empty();
  if (env.pick > 0.0f)
    s << "env-pick=" << Fmt(env.pick) << "\n"
      << "env-sampling="
      << (opt.envSampling == EnvSampling::kBsdfOnly
              ? "uniform"
              : (opt.envSampling == EnvSampling::kGuided ? "guided" : (portals ? "portals" : "importance")))
      << "\n";
  if (env.pick > 0.0f && portals)
    s << "env-portal-mix=" << Fmt(opt.envPortalMix < 0.0f ? env.portalMix : opt.envPortalMix)
      << (opt.envPortalByArea ? ",area" : "") << (opt.envPortalAreaPoints ? ",area-points" : "") << "\n";
  if (env.pick > 0.0f && opt.envSampling == EnvSampling::kGuided)
    s << "env-guide=" << opt.envGuideTile << "," << Fmt(opt.envGuideMix) << "," << opt.envGuideDepths << "\n";
  // The delta lights' share (their records are in scene-content), only for scenes that have them, likewise.
  if (data.deltaShare > 0.0f) s << "delta-share=" << Fmt(data.deltaShare) << "\n";
  const Camera& c = data.camera;
  s << "camera-eye=" << Fmt(c.eye) << "\n"
    << "camera-right=" << Fmt(c.u) << "\n"
    << "camera-up=" << Fmt(c.v) << "\n"
    << "camera-forward=" << Fmt(c.w) << "\n"
    << "camera-tan-half-fov=" << Fmt(c.tanHalfFovY) << "\n";
  if (c.lensRadius > 0.0f)  // (a pinhole's settings stay as they were, so its old checkpoints still resume)
    s << "camera-lens-radius=" << Fmt(c.lensRadius) << "\n"
      << "camera-focus-distance=" << Fmt(c.focusDistance) << "\n";
  s << "light-sampling=" << (opt.lightSampling == LightSampling::kTiles ? "tiles" : "power") << "\n";
  if (opt.lightSampling == LightSampling::kTiles)
    s << "light-clusters=" << opt.lightClusters << "\n"
      << "tile-size=" << opt.tileSize << "\n"
      << "tile-guide-mix=" << Fmt(opt.tileGuideMix) << "\n";
  return s.str();
}

}  // namespace tracer

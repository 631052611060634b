// @file cli.cpp: the tracer's flags: their --help text, parsing into CliOptions and validation.
#include "app/cli.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cxxopts.hpp>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tracer/host/aov.h"
#include "tracer/host/checkpoint.h"
#include "tracer/host/file_util.h"
#include "tracer/host/image_io.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/version.h"

namespace tracer {
namespace {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Vec3 ParseVec3(const std::string& flag, const std::string& s) {
  Vec3 v;
  char extra;
  std::string t = s;
  for (char& c : t)
    if (c == ',') c = ' ';
  std::istringstream in(t);
  if (!(in >> v.x >> v.y >> v.z) || (in >> extra) || !IsFinite(v))
    throw UsageError("--" + flag + " expects three finite numbers x,y,z, got '" + s + "'");
  return v;
}

// The file must be creatable: its folder exists, is a folder, and accepts a new file. access(W_OK) is not
// enough: root passes it on read-only mounts and on /proc, and it says yes for a regular file used as a
// folder's name. So a probe file is created and removed, as the real write will do.
void CheckWritablePath(const std::string& flag, const std::string& path) {
  if (path.empty()) throw UsageError(flag + ": empty path");
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw UsageError(flag + " " + path + ": is a folder");
  const std::string dir = FolderOf(path);
  if (stat(dir.c_str(), &st) != 0)
    throw UsageError(flag + " " + path + ": folder '" + dir + "' does not exist or is not writable (" +
                     std::strerror(errno) + ")");
  if (!S_ISDIR(st.st_mode)) throw UsageError(flag + " " + path + ": '" + dir + "' is not a folder");
  std::string probe = dir + "/.tracer-probe-XXXXXX";
  int fd = mkstemp(probe.data());
  if (fd < 0)  // (the folder exists: /proc, say, or a read-only mount)
    throw UsageError(flag + " " + path + ": cannot create a file in the folder '" + dir + "' (" + std::strerror(errno) +
                     "): it is not writable; choose another folder");
  close(fd);
  unlink(probe.c_str());
}

// cxxopts's "Argument 'X' failed to parse" names the value, not the option: the option that took X in `args`
// ("--width X" or "--width=X"), with the values it accepts.
std::string UnparsedValueMessage(const std::string& what, const std::vector<char*>& args) {
  const size_t open = what.find(cxxopts::LQUOTE), close = what.rfind(cxxopts::RQUOTE);
  if (open == std::string::npos || close == std::string::npos || close < open) return what;
  const std::string value = what.substr(open + cxxopts::LQUOTE.size(), close - open - cxxopts::LQUOTE.size());
  std::string option;
  for (size_t i = 1; i < args.size() && option.empty(); ++i) {
    const std::string a = args[i];
    if (a == value && args[i - 1][0] == '-') option = args[i - 1];
    const size_t eq = a.find('=');
    if (a.compare(0, 2, "--") == 0 && eq != std::string::npos && a.substr(eq + 1) == value) option = a.substr(0, eq);
  }
  if (option.empty()) return what;
  const std::string side = std::to_string(kMaxFilmSide);
  const std::pair<const char*, std::string> accepted[] = {
      {"--width", "a whole number from 1 to " + side},
      {"--height", "a whole number from 1 to " + side},
      {"--spp", "a whole number from 1 to 2147483647"},
      {"--seed", "a whole number from 0 to 4294967295"},
      {"--max-depth", "a whole number from 0 to 1000"},
      {"--threads", "a whole number >= 0 (0: all cores)"},
      {"--paths-in-flight", "a whole number from 0 to 268435456 (2^28)"},
      {"--aov-samples", "a whole number from 1 to 4096"},
      {"--adaptive-min-spp", "a whole number from 2 to 1048576"},
      {"--light-clusters", "a whole number from 1 to 4096"},
      {"--tile-size", "a whole number from 1 to 1024"},
      {"--persistent", "a whole number from 0 to 32"},
      {"--repeats", "a whole number from 1 to 1000"},
  };
  std::string expected = "a number";
  for (const auto& [name, values] : accepted)
    if (option == name) expected = values;
  return option + " " + value + ": not a valid value (expected " + expected + ")";
}

// Where the other ranks of an MPI job send what rank 0 prints.
std::ostream& NullStream() {
  static std::ostream null(nullptr);
  return null;
}

// The help's groups in the order --help prints them (cxxopts would sort them by name): what most renders need
// first, then the rest by topic. Adding options through Group records the order, so no group is left out.
class HelpGroups {
 public:
  explicit HelpGroups(cxxopts::Options& cli) : cli_(cli) {}
  cxxopts::OptionAdder Group(const std::string& name) {
    order_.push_back(name);
    return cli_.add_options(name);
  }
  const std::vector<std::string>& Order() const { return order_; }

 private:
  cxxopts::Options& cli_;
  std::vector<std::string> order_;
};

// The naive twins' group of MakeOptionsSpec: each optimisation's reasonable first attempt (docs/PERFORMANCE.md).
void AddNaiveTwinOptions(HelpGroups& groups) {
  // clang-format off
  groups.Group("Naive twin (same image, slower; docs/PERFORMANCE.md)")
    ("naive-layout", "array-of-structs ray, hit and path state with float3 fields")
    ("naive-compaction", "one atomicAdd per thread when pushing to queues")
    ("no-compaction", "keep dead paths in place; launch every stage over the whole pool")
    ("single-shade-kernel", "one shade kernel that switches on the material, not per-class queues")
    ("plain-loads", "read the BVH and scene through plain loads, not the read-only cache")
    ("pageable-readback", "read the film back through pageable, not pinned, host memory")
    ("serial-shadows", "trace each bounce's shadow rays before the next bounce, not beside it")
    ("serial-shading", "run the miss stage and each material class's shading one after another, not side by side")
    ("one-thread-per-ray", "trace each ray to the end on its own thread (--persistent 0)")
    ("naive-obj-parse", "parse the OBJ with tinyobjloader on one thread, after the checks")
    ("naive-minplus", "same as --minplus naive: the uncoalesced dense min-plus kernel")
    ("naive-reduction", "reduce tile statistics with divergent neighbored pairs")
    ("naive-portal-pick", "pick environment portals by area, not by their projected solid angle from the point")
    ("naive-portal-pdf", "sum a portal sample's pdf over every portal, even where it can cross only the one drawn")
    ("naive-portal-point", "draw points on environment portals uniformly by area, not by the solid angle they fill");
  // clang-format on
}

// One short line per option; what needs more words is in docs/RENDERING.md, docs/FORMATS.md and docs/PERFORMANCE.md.
cxxopts::Options MakeOptionsSpec(std::vector<std::string>& groupOrder) {
  cxxopts::Options cli(
      "tracer",
      "tracer: a wavefront path tracer for NVIDIA GPUs, with a CPU reference renderer.\n"
      "Renders an OBJ+MTL scene (emitters from MTL Ke) or a pbrt-v4 scene to .png, .hdr, .pfm or .exr.\n");
  cli.positional_help("SCENE.obj|SCENE.pbrt").show_positional_help();
  cli.set_width(100);
  HelpGroups groups(cli);
  // clang-format off
  groups.Group("Common")
    ("scene", "OBJ or pbrt-v4 scene; a SCENE.camera file beside an OBJ sets the camera", cxxopts::value<std::string>(), "SCENE")
    ("o,output", "image file: .png, .hdr, .pfm or .exr", cxxopts::value<std::string>()->default_value("output/render.png"), "FILE")
    ("width", "image width in pixels", cxxopts::value<int>()->default_value("512"), "N")
    ("height", "image height in pixels", cxxopts::value<int>()->default_value("512"), "N")
    ("spp", "samples per pixel (default: 1024 on the GPU, 64 on the CPU)", cxxopts::value<int>(), "N")
    ("eye", "camera position, with --look-at (default: SCENE.camera, else framed)", cxxopts::value<std::string>(), "X,Y,Z")
    ("look-at", "the point the camera looks at", cxxopts::value<std::string>(), "X,Y,Z")
    ("up", "the camera's up direction", cxxopts::value<std::string>()->default_value("0,1,0"), "X,Y,Z")
    ("fov", "vertical field of view in degrees (default: SCENE.camera's, else 45)", cxxopts::value<float>(), "DEG")
    ("env", "environment radiance where rays leave the scene", cxxopts::value<std::string>()->default_value("0,0,0"), "R,G,B")
    ("env-map", "lat-long .hdr or .exr map instead of --env (docs/RENDERING.md)", cxxopts::value<std::string>(), "FILE")
    ("env-rotate", "turn the environment map about +y", cxxopts::value<float>()->default_value("0"), "DEG")
    ("env-scale", "multiply the environment map's radiance by S", cxxopts::value<float>()->default_value("1"), "S")
    ("backend", "auto (the GPU when one is usable), cpu or cuda", cxxopts::value<std::string>()->default_value("auto"), "NAME")
    ("time", "stop at a pass boundary after SEC seconds (0: no limit)", cxxopts::value<double>()->default_value("0"), "SEC")
    ("q,quiet", "no progress bar, summary or warnings on stderr; errors only")
    ("verbose", "also print the scene, camera, BVH build and where time went")
    ("version", "print the version and exit")
    ("h,help", "print this help and exit");
  groups.Group("Camera lens")
    ("aperture", "thin-lens radius for depth of field (default: SCENE.camera's, else 0)", cxxopts::value<float>(), "R")
    ("focus-distance", "distance of the sharp plane (default: the eye to the look-at point)", cxxopts::value<float>(), "D");
  groups.Group("Output and AOV (docs/RENDERING.md)")
    ("exposure", "exposure in stops, applied to .png output", cxxopts::value<float>()->default_value("0"), "STOPS")
    ("exr-half", "write .exr output as 16-bit floats instead of 32-bit")
    ("aov", "extra images: albedo, normal, depth, position, emission, variance, samples, noisy, halves", cxxopts::value<std::string>(), "LIST")
    ("aov-samples", "camera rays per pixel for the first-hit outputs of --aov", cxxopts::value<int>()->default_value("8"), "N")
    ("denoise", "denoise the image: nfor (regression, the default) or atrous (wavelets)", cxxopts::value<std::string>()->implicit_value("nfor"), "FILTER");
  groups.Group("Sampling (docs/RENDERING.md)")
    ("seed", "random seed; the same seed gives the same image", cxxopts::value<uint32_t>()->default_value("1"), "N")
    ("max-depth", "maximum number of bounces", cxxopts::value<int>()->default_value("8"), "N")
    ("clamp", "cap each contribution's largest component (0: off)", cxxopts::value<float>()->default_value("0"), "C")
    ("adaptive", "stop a pixel tile at relative error T, e.g. 0.05 (0: off)", cxxopts::value<float>()->default_value("0"), "T")
    ("adaptive-min-spp", "samples every pixel gets before --adaptive may stop it", cxxopts::value<int>()->default_value("64"), "N")
    ("env-sampling", "portals (NEE through the scene's portals, else as importance), importance (NEE, MIS; their naive twin), uniform (its naive twin) or guided (interiors)", cxxopts::value<std::string>()->default_value("portals"), "MODE")
    ("env-portal-mix", "share of environment samples through the portals, in (0, 1], or auto (by the sky)", cxxopts::value<std::string>()->default_value("auto"), "A")
    ("env-guide-tile", "screen tile size in pixels of --env-sampling guided", cxxopts::value<int>()->default_value("16"), "N")
    ("env-guide-mix", "share of guided environment samples, in (0, 1)", cxxopts::value<float>()->default_value("0.5"), "A")
    ("env-guide-depths", "path vertices below this depth use the environment guide", cxxopts::value<int>()->default_value("1"), "N")
    ("threads", "CPU threads for rendering and loading (0: all cores)", cxxopts::value<int>()->default_value("0"), "N")
    ("paths-in-flight", "path pool size (0: on the GPU 2M to 8M, as a 32nd of its memory holds; 128K on the CPU)", cxxopts::value<long long>()->default_value("0"), "N")
    ("check-nan", "stop at the first NaN/Inf sample, report its pixel and depth; no image");
  groups.Group("Light sampling (docs/RENDERING.md)")
    ("light-sampling", "power, or tiles: guided per screen tile", cxxopts::value<std::string>()->default_value("power"), "MODE")
    ("light-clusters", "maximum number of emitter clusters for tile guiding", cxxopts::value<int>()->default_value("256"), "N")
    ("tile-size", "screen tile size in pixels for tile guiding", cxxopts::value<int>()->default_value("16"), "N")
    ("tile-guide-mix", "the tile guide's weight against power, in [0, 1)", cxxopts::value<float>()->default_value("0.5"), "A")
    ("minplus", "band, or on the GPU naive, coalesced, tiled, dpx", cxxopts::value<std::string>()->default_value("band"), "KERNEL");
  groups.Group("Scene files")
    ("texture-path", "another folder to search for textures and MTL files (repeatable)", cxxopts::value<std::vector<std::string>>(), "DIR")
    ("allow-outside-paths", "accept mtllib and texture paths outside the scene's folder");
  groups.Group("Checkpoint")
    ("checkpoint", "save the film every --checkpoint-interval, at the end and on Ctrl-C", cxxopts::value<std::string>(), "FILE")
    ("checkpoint-interval", "seconds between checkpoints (0: after every pass)", cxxopts::value<double>()->default_value("60"), "S")
    ("resume", "continue FILE's render up to --spp (with the same settings)", cxxopts::value<std::string>(), "FILE");
  // clang-format on
  AddNaiveTwinOptions(groups);
  // clang-format off
  groups.Group("BVH and traversal")
    ("bvh", "wide (compressed 8-wide nodes) or binary, its naive twin", cxxopts::value<std::string>()->default_value("wide"), "KIND")
    ("bvh-builder", "auto, gpu (H-PLOC), ploc (its naive twin) or cpu (SBVH)", cxxopts::value<std::string>()->default_value("auto"), "NAME")
    ("no-spatial-splits", "object splits only in the wide BVH (no SBVH on the host, no split top on the GPU): the naive twin")
    ("persistent", "refill a warp once fewer than N of 32 lanes trace, every bounce (default 24 after the camera's bounce, which goes one thread per ray; 0: off)", cxxopts::value<int>()->default_value("24"), "N")
    ("sort-rays", "sort extension rays by direction and origin (GPU)");
  groups.Group("Profiling (GPU)")
    ("profile", "time each optimisation against its naive twin; write --report")
    ("benchmark", "measure samples/s, rays/s, per-kernel ms and peak memory")
    ("report", "JSON report of --profile and --benchmark", cxxopts::value<std::string>()->default_value("output/profile.json"), "FILE")
    ("repeats", "timed runs after a warm-up; the median counts (also --trace-rays)", cxxopts::value<int>()->default_value("5"), "N");
  groups.Group("Ray file (docs/FORMATS.md)")
    ("trace-rays", "trace FILE's 32-byte ray records; print rays/s and hit counts", cxxopts::value<std::string>(), "FILE")
    ("hits", "with --trace-rays: write a 16-byte hit record per ray to FILE", cxxopts::value<std::string>(), "FILE")
    ("any-hit", "with --trace-rays: any-hit (shadow) traversal")
    ("dump-rays", "with --backend cpu: write the first pass's rays to DIR", cxxopts::value<std::string>(), "DIR")
    ("make-rays", "write benchmark rays (primary, diffuse, ao) to FILE; exit (camera: --eye/--look-at, else fixed by the bounds)", cxxopts::value<std::string>(), "KIND FILE");
  // clang-format on
  cli.parse_positional({"scene"});
  groupOrder = groups.Order();
  return cli;
}

// --make-rays takes two values, KIND FILE, which cxxopts cannot express: ExtractMakeRays takes the flag and the
// (up to two) words after it that do not start with '-' out of argv before cxxopts parses the rest, and
// ReadMakeRays checks them. "--make-rays=KIND FILE" works too.
struct MakeRaysArgs {
  int given = 0;                   // how many times the flag appears
  std::vector<std::string> words;  // the words after its last appearance: KIND, then FILE
};

std::vector<char*> ExtractMakeRays(int argc, char** argv, MakeRaysArgs& out) {
  const std::string flag = "--make-rays";
  std::vector<char*> rest;
  int i = 0;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;  // the end of the options: the rest is left to cxxopts
    if (a != flag && a.compare(0, flag.size() + 1, flag + "=") != 0) {
      rest.push_back(argv[i]);
      continue;
    }
    ++out.given;
    out.words.clear();
    if (a != flag) out.words.push_back(a.substr(flag.size() + 1));
    while (out.words.size() < 2 && i + 1 < argc && argv[i + 1][0] != '-') out.words.push_back(argv[++i]);
  }
  for (; i < argc; ++i) rest.push_back(argv[i]);
  return rest;
}

// cxxopts never takes a separate word as the value of a flag with an implicit value ("--denoise atrous" would make
// atrous a second scene), so that word is joined to the flag ("--denoise=atrous") when it names a filter.
void JoinDenoiseValue(std::vector<char*>& args, std::vector<std::string>& joined) {
  joined.reserve(args.size());  // (the pointers into it must stay valid)
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    const std::string next = args[i + 1];
    if (std::string(args[i]) != "--denoise" || (next != "nfor" && next != "atrous")) continue;
    joined.push_back("--denoise=" + next);
    args[i] = joined.back().data();
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  }
}

// The Read* functions below run in this order, so that with several bad flags the same one is reported first
// as before the split.

// --env-map, --env-rotate, --env-scale and --env-sampling (after --env). The map itself is read with the scene.
void ReadEnvironmentMap(const cxxopts::ParseResult& r, CliOptions& o) {
  const std::string sampling = r["env-sampling"].as<std::string>();
  if (sampling != "portals" && sampling != "importance" && sampling != "uniform" && sampling != "guided")
    throw UsageError("--env-sampling must be portals, importance, uniform or guided, not '" + sampling + "'");
  o.render.envSampling = sampling == "uniform"      ? EnvSampling::kBsdfOnly
                         : sampling == "guided"     ? EnvSampling::kGuided
                         : sampling == "importance" ? EnvSampling::kImportance
                                                    : EnvSampling::kPortals;
  o.envSamplingGiven = r.count("env-sampling") > 0;
  const std::string mix = r["env-portal-mix"].as<std::string>();
  if (mix != "auto") {
    char* end = nullptr;
    o.render.envPortalMix = std::strtof(mix.c_str(), &end);
    if (end == mix.c_str() || *end != '\0' || !(o.render.envPortalMix > 0.0f && o.render.envPortalMix <= 1.0f))
      throw UsageError("--env-portal-mix must be auto or a number in (0, 1], not '" + mix + "'");
  }
  o.render.envGuideTile = r["env-guide-tile"].as<int>();
  if (o.render.envGuideTile < 1 || o.render.envGuideTile > 1024)
    throw UsageError("--env-guide-tile must be between 1 and 1024");
  o.render.envGuideMix = r["env-guide-mix"].as<float>();
  if (!(o.render.envGuideMix > 0.0f && o.render.envGuideMix < 1.0f))
    throw UsageError("--env-guide-mix must be in (0, 1)");
  o.render.envGuideDepths = r["env-guide-depths"].as<int>();
  if (o.render.envGuideDepths < 1) throw UsageError("--env-guide-depths must be at least 1");
  o.envRotate = r["env-rotate"].as<float>();
  o.envScale = r["env-scale"].as<float>();
  if (!std::isfinite(o.envRotate)) throw UsageError("--env-rotate must be a finite number of degrees");
  if (!(o.envScale >= 0.0f) || !std::isfinite(o.envScale)) throw UsageError("--env-scale must be a finite number >= 0");
  if (!r.count("env-map")) {
    if (r.count("env-rotate") || r.count("env-scale"))
      throw UsageError("--env-rotate and --env-scale go with --env-map");
    return;
  }
  o.envMapPath = r["env-map"].as<std::string>();
  if (r.count("env")) throw UsageError("--env and --env-map exclude each other (--env-scale scales the map)");
}

// --denoise [FILTER], after --spp and --aov. (A value in the next word is joined to the flag by JoinDenoiseValue.)
void ReadDenoise(const cxxopts::ParseResult& r, CliOptions& o) {
  o.denoise = r.count("denoise") > 0;
  o.render.halfBuffers = o.denoise;
  if (o.denoise && !DenoiseMethodFromName(r["denoise"].as<std::string>(), &o.denoiseMethod))
    throw UsageError("--denoise must be nfor or atrous, not '" + r["denoise"].as<std::string>() + "'");
  if ((o.aovKinds & (kAovNoisy | kAovHalves)) && !o.denoise)
    throw UsageError("--aov noisy and halves go with --denoise");
  if (o.denoise && o.sppGiven && o.render.spp < 2)
    throw UsageError("--denoise needs --spp 2 or more (each half of the samples needs one)");
}

// Image size, samples, seed, depth, exposure, environment, clamp and time limit.
void ReadImageAndSampling(const cxxopts::ParseResult& r, CliOptions& o) {
  RenderOptions& opt = o.render;
  opt.width = r["width"].as<int>();
  opt.height = r["height"].as<int>();
  if (opt.width <= 0 || opt.height <= 0 || opt.width > kMaxFilmSide || opt.height > kMaxFilmSide)
    throw UsageError("--width and --height must be between 1 and " + std::to_string(kMaxFilmSide));
  // Bounds the film (3 uint64 per pixel) and keeps pixel and sample indices within 32 bits.
  if (static_cast<int64_t>(opt.width) * opt.height > kMaxFilmPixels)
    throw UsageError("--width " + std::to_string(opt.width) + " --height " + std::to_string(opt.height) + " is " +
                     std::to_string(static_cast<int64_t>(opt.width) * opt.height) + " pixels; the limit is " +
                     std::to_string(kMaxFilmPixels) + " (2^28)");
  o.sppGiven = r.count("spp") > 0;
  if (o.sppGiven) {
    opt.spp = r["spp"].as<int>();
    if (opt.spp <= 0) throw UsageError("--spp must be at least 1");
  }
  opt.seed = r["seed"].as<uint32_t>();
  opt.maxDepth = r["max-depth"].as<int>();
  if (opt.maxDepth < 0 || opt.maxDepth > 1000) throw UsageError("--max-depth must be between 0 and 1000");
  o.exposure = r["exposure"].as<float>();
  o.exrHalf = r.count("exr-half") > 0;
  if (r.count("aov")) {
    try {
      o.aovKinds = ParseAovList(r["aov"].as<std::string>());
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  o.aovSamples = r["aov-samples"].as<int>();
  if (o.aovSamples < 1 || o.aovSamples > 4096) throw UsageError("--aov-samples must be between 1 and 4096");
  opt.varianceAov = (o.aovKinds & kAovVariance) != 0;
  ReadDenoise(r, o);
  // The GPU keeps the camera rays' hits that the first-hit features take, so as not to trace them again.
  if (o.denoise || (o.aovKinds & kFirstHitAovs)) opt.firstHitSamples = o.aovSamples;
  o.env = ParseVec3("env", r["env"].as<std::string>());
  o.envGiven = r.count("env") > 0 || r.count("env-map") > 0;
  if (o.env.x < 0 || o.env.y < 0 || o.env.z < 0) throw UsageError("--env must not be negative");
  ReadEnvironmentMap(r, o);
  opt.clamp = r["clamp"].as<float>();
  if (!(opt.clamp >= 0.0f)) throw UsageError("--clamp must be >= 0");
  opt.timeLimit = r["time"].as<double>();
  if (!(opt.timeLimit >= 0.0)) throw UsageError("--time must be >= 0");
  opt.adaptiveThreshold = r["adaptive"].as<float>();
  if (!(opt.adaptiveThreshold >= 0.0f && opt.adaptiveThreshold <= 1.0f))
    throw UsageError("--adaptive must be a relative standard error between 0 (off) and 1, such as 0.02");
  opt.adaptiveMinSpp = r["adaptive-min-spp"].as<int>();
  if (opt.adaptiveMinSpp < 2 || opt.adaptiveMinSpp > 1 << 20)
    throw UsageError("--adaptive-min-spp must be between 2 and 1048576 (a pixel's error needs two batches)");
}

// --check-nan, --checkpoint, --checkpoint-interval and --resume.
void ReadLongRenders(const cxxopts::ParseResult& r, CliOptions& o) {
  o.checkNan = r.count("check-nan") > 0;
  if (r.count("checkpoint")) o.checkpointPath = r["checkpoint"].as<std::string>();
  o.render.checkpointSeconds = r["checkpoint-interval"].as<double>();
  if (!(o.render.checkpointSeconds >= 0.0 && o.render.checkpointSeconds < 1e9))
    throw UsageError("--checkpoint-interval must be a number of seconds >= 0");
  if (r.count("resume")) {
    o.resumePath = r["resume"].as<std::string>();
    struct stat st;
    if (!o.otherRank &&
        (stat(o.resumePath.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || access(o.resumePath.c_str(), R_OK) != 0))
      throw UsageError("--resume " + o.resumePath + ": no such readable file");
  }
}

// Backend, threads, pool size, quiet or verbose, loader policy and the naive twins of the GPU optimisations.
void ReadBackendAndVariants(const cxxopts::ParseResult& r, CliOptions& o) {
  RenderOptions& opt = o.render;
  o.backend = r["backend"].as<std::string>();
  if (o.backend != "auto" && o.backend != "cpu" && o.backend != "cuda")
    throw UsageError("--backend must be auto, cpu or cuda");
  opt.threads = r["threads"].as<int>();
  if (opt.threads < 0) throw UsageError("--threads must be >= 0");
  opt.pathsInFlight = r["paths-in-flight"].as<long long>();
  if (opt.pathsInFlight < 0 || opt.pathsInFlight > (1LL << 28))
    throw UsageError("--paths-in-flight must be between 0 and 2^28");
  opt.quiet = r.count("quiet") > 0;
  o.verbose = r.count("verbose") > 0;
  if (opt.quiet && o.verbose) throw UsageError("--quiet and --verbose exclude each other");
  o.allowOutsidePaths = r.count("allow-outside-paths") > 0;
  o.naiveObjParse = r.count("naive-obj-parse") > 0;
  if (r.count("texture-path")) o.texturePaths = r["texture-path"].as<std::vector<std::string>>();
  for (const std::string& dir : o.texturePaths) {
    struct stat st;
    if (!o.otherRank && (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)))
      throw UsageError("--texture-path " + dir + ": no such folder");
  }
  opt.naiveLayout = r.count("naive-layout") > 0;
  if (r.count("naive-compaction") && r.count("no-compaction"))
    throw UsageError("--naive-compaction and --no-compaction exclude each other");
  if (r.count("naive-compaction")) opt.compaction = Compaction::kPerThreadAtomic;
  if (r.count("no-compaction")) opt.compaction = Compaction::kNone;
  opt.singleShadeKernel = r.count("single-shade-kernel") > 0;
  opt.plainLoads = r.count("plain-loads") > 0;
  opt.pageableReadback = r.count("pageable-readback") > 0;
  opt.serialShadows = r.count("serial-shadows") > 0;
  opt.serialShading = r.count("serial-shading") > 0;
  const std::string bvh = r["bvh"].as<std::string>();
  if (bvh != "wide" && bvh != "binary") throw UsageError("--bvh must be wide or binary, not '" + bvh + "'");
  opt.binaryBvh = bvh == "binary";
  o.spatialSplits = r.count("no-spatial-splits") == 0;
  o.bvhBuilder = r["bvh-builder"].as<std::string>();
  if (o.bvhBuilder != "auto" && o.bvhBuilder != "gpu" && o.bvhBuilder != "ploc" && o.bvhBuilder != "cpu")
    throw UsageError("--bvh-builder must be auto, gpu, ploc or cpu, not '" + o.bvhBuilder + "'");
  opt.persistentRefill = r["persistent"].as<int>();
  if (opt.persistentRefill < 0 || opt.persistentRefill > 32) throw UsageError("--persistent must be between 0 and 32");
  if (r.count("one-thread-per-ray")) {
    if (r.count("persistent") && opt.persistentRefill > 0)
      throw UsageError("--one-thread-per-ray and --persistent N exclude each other");
    opt.persistentRefill = 0;
  }
  // By default the camera's bounce (and a coherent ray file) one thread per ray, the rest persistent; an explicit
  // --persistent N makes every bounce persistent, --one-thread-per-ray none.
  opt.perRayCameraBounce = r.count("persistent") == 0 && r.count("one-thread-per-ray") == 0;
  opt.sortRays = r.count("sort-rays") > 0;
}

void ReadLightSampling(const cxxopts::ParseResult& r, RenderOptions& opt) {
  std::string ls = r["light-sampling"].as<std::string>();
  if (ls == "power")
    opt.lightSampling = LightSampling::kPower;
  else if (ls == "tiles")
    opt.lightSampling = LightSampling::kTiles;
  else
    throw UsageError("--light-sampling must be power or tiles");
  opt.lightClusters = r["light-clusters"].as<int>();
  if (opt.lightClusters < 1 || opt.lightClusters > 4096)
    throw UsageError("--light-clusters must be between 1 and 4096");
  opt.tileSize = r["tile-size"].as<int>();
  if (opt.tileSize < 1 || opt.tileSize > 1024) throw UsageError("--tile-size must be between 1 and 1024");
  opt.tileGuideMix = r["tile-guide-mix"].as<float>();
  if (!(opt.tileGuideMix >= 0.0f && opt.tileGuideMix < 1.0f)) throw UsageError("--tile-guide-mix must be in [0, 1)");
  if (!MinPlusKernelFromName(r["minplus"].as<std::string>(), &opt.minPlus))
    throw UsageError("--minplus must be band, naive, coalesced, tiled or dpx");
  if (r.count("naive-minplus")) opt.minPlus = MinPlusKernel::kNaive;
  opt.naiveReduction = r.count("naive-reduction") > 0;
  opt.envPortalByArea = r.count("naive-portal-pick") > 0;
  opt.envPortalLoop = r.count("naive-portal-pdf") > 0;
  opt.envPortalAreaPoints = r.count("naive-portal-point") > 0;
}

void ReadProfiling(const cxxopts::ParseResult& r, CliOptions& o) {
  const bool profile = r.count("profile") > 0, benchmark = r.count("benchmark") > 0;
  if (profile && benchmark) throw UsageError("--profile and --benchmark exclude each other");
  o.command = profile ? CliCommand::kProfile : benchmark ? CliCommand::kBenchmark : CliCommand::kRender;
  o.reportPath = r["report"].as<std::string>();
  o.repeats = r["repeats"].as<int>();
  if (o.repeats < 1 || o.repeats > 1000) throw UsageError("--repeats must be between 1 and 1000");
}

// As the .camera parser checks it: a zero up, or one parallel to the view, leaves the camera's frame undefined
// (NaN rays: an image of background only).
void CheckUp(const std::string& written, const CliOptions& o) {
  if (IsBlack(o.up)) throw UsageError("--up " + written + " is the zero vector; give a direction such as 0,1,0");
  if (!o.explicitCamera) return;
  const Vec3 forward = Normalize(o.lookAt - o.eye);
  if (Length(Cross(forward, Normalize(o.up))) > 1e-6f) return;
  // Suggest the axis least aligned with the view.
  const float ax = std::fabs(forward.x), ay = std::fabs(forward.y), az = std::fabs(forward.z);
  const char* axis = ay <= ax && ay <= az ? "0,1,0" : az <= ax ? "0,0,1" : "1,0,0";
  throw UsageError("--up " + written +
                   " is parallel to the view direction (from --eye to --look-at); pass another --up, such as " + axis);
}

// --trace-rays, --hits, --any-hit and --dump-rays, after ReadProfiling and ReadLongRenders.
void ReadRayFiles(const cxxopts::ParseResult& r, CliOptions& o) {
  if (r.count("trace-rays")) o.traceRaysPath = r["trace-rays"].as<std::string>();
  if (r.count("hits")) o.hitsPath = r["hits"].as<std::string>();
  if (r.count("dump-rays")) {
    o.dumpRaysDir = r["dump-rays"].as<std::string>();
    if (o.dumpRaysDir.empty()) throw UsageError("--dump-rays: empty folder name");
  }
  o.anyHit = r.count("any-hit") > 0;
  if (o.traceRaysPath.empty()) {
    if (!o.hitsPath.empty() || o.anyHit) throw UsageError("--hits and --any-hit go with --trace-rays");
    if (o.dumpRaysDir.empty()) return;
    if (o.command != CliCommand::kRender) throw UsageError("--dump-rays does not apply to --profile or --benchmark");
    if (o.backend != "cpu") throw UsageError("--dump-rays needs --backend cpu for now");
    return;
  }
  if (o.command != CliCommand::kRender || !o.checkpointPath.empty() || !o.resumePath.empty() || !o.dumpRaysDir.empty())
    throw UsageError("--trace-rays excludes --profile, --benchmark, --checkpoint, --resume and --dump-rays");
  if (o.otherRank) return;  // refused under MPI (main.cpp); rank 0 says so
  struct stat st;
  if (stat(o.traceRaysPath.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || access(o.traceRaysPath.c_str(), R_OK) != 0)
    throw UsageError("--trace-rays " + o.traceRaysPath + ": no such readable file");
  if (!o.hitsPath.empty()) CheckWritablePath("--hits", o.hitsPath);
}

// --make-rays KIND FILE, after ReadProfiling and ReadLongRenders and before ReadRayFiles (so that with
// --trace-rays the exclusion is reported, not the ray file). Sets the benchmark's default size.
void ReadMakeRays(const cxxopts::ParseResult& r, const MakeRaysArgs& m, CliOptions& o) {
  if (m.given == 0) return;
  const std::string kinds = "primary, diffuse or ao";
  if (m.given > 1) throw UsageError("--make-rays is given " + std::to_string(m.given) + " times; give it once");
  if (m.words.empty() || m.words[0].empty())
    throw UsageError("--make-rays expects KIND FILE (KIND: " + kinds + "), got nothing");
  if (!RayKindFromName(m.words[0], &o.makeRaysKind))
    throw UsageError("--make-rays: unknown KIND '" + m.words[0] + "' (use " + kinds + ")");
  if (m.words.size() < 2) throw UsageError("--make-rays " + m.words[0] + ": FILE is missing (--make-rays KIND FILE)");
  o.makeRaysPath = m.words[1];
  if (o.command != CliCommand::kRender || r.count("trace-rays") || r.count("dump-rays") || !o.checkpointPath.empty() ||
      !o.resumePath.empty())
    throw UsageError(
        "--make-rays excludes --trace-rays, --profile, --benchmark, --checkpoint, --resume and --dump-rays");
  if (r.count("aperture") || r.count("focus-distance"))
    throw UsageError(
        "--make-rays writes a pinhole camera's rays through pixel centres; drop --aperture and --focus-distance");
  if (!r.count("width")) o.render.width = 1920;
  if (!r.count("height")) o.render.height = 1080;
  if (!o.otherRank) CheckWritablePath("--make-rays", o.makeRaysPath);
}

void ReadCamera(const cxxopts::ParseResult& r, CliOptions& o) {
  if (r.count("eye") || r.count("look-at")) {
    if (!(r.count("eye") && r.count("look-at"))) throw UsageError("--eye and --look-at go together");
    o.explicitCamera = true;
    o.eye = ParseVec3("eye", r["eye"].as<std::string>());
    o.lookAt = ParseVec3("look-at", r["look-at"].as<std::string>());
    if (Length(o.lookAt - o.eye) == 0.0f) throw UsageError("--eye and --look-at must differ");
  }
  o.up = ParseVec3("up", r["up"].as<std::string>());
  CheckUp(r["up"].as<std::string>(), o);
  if (r.count("aperture")) {
    o.aperture = r["aperture"].as<float>();
    if (!(o.aperture >= 0.0f) || !std::isfinite(o.aperture))
      throw UsageError("--aperture (the lens radius) must be a finite number >= 0");
  }
  if (r.count("focus-distance")) {
    o.focusDistance = r["focus-distance"].as<float>();
    if (!(o.focusDistance > 0.0f) || !std::isfinite(o.focusDistance))
      throw UsageError("--focus-distance must be a finite number > 0");
  }
  if (r.count("fov")) {
    o.fov = r["fov"].as<float>();
    o.haveFov = true;
    if (!(o.fov > 0.0f && o.fov < 180.0f)) throw UsageError("--fov must be between 0 and 180 degrees");
  }
}

// A scene file's own render settings (pbrt-v4's Film, Sampler and Integrator) where no flag gives them, for a render.
// Every rank reads them, so that each makes a film of the same size. Returns 1 (said on err) for a file that does not
// parse.
int ApplySceneDefaults(const cxxopts::ParseResult& r, CliOptions& o, std::ostream& err) {
  // The other ranks of an MPI job take rank 0's (Render shares them): a node may lack the file. The ray-file
  // commands keep their own documented sizes.
  if (o.command != CliCommand::kRender || o.otherRank || !o.makeRaysPath.empty() || !o.traceRaysPath.empty())
    return kContinue;
  SceneDefaults d;
  try {
    d = ReadSceneDefaults(o.scenePath);
  } catch (const SceneError& e) {
    err << "tracer: error: " << e.what() << "\n";
    return 1;
  }
  if (!d.valid) return kContinue;
  RenderOptions& opt = o.render;
  if (!r.count("width")) opt.width = d.width;
  if (!r.count("height")) opt.height = d.height;
  if (opt.width > kMaxFilmSide || opt.height > kMaxFilmSide ||
      static_cast<int64_t>(opt.width) * opt.height > kMaxFilmPixels)
    throw UsageError(o.scenePath + " asks for a " + std::to_string(opt.width) + "x" + std::to_string(opt.height) +
                     " image, more than the tracer renders; pass --width and --height");
  if (!o.sppGiven) {
    opt.spp = d.spp;
    o.sppGiven = true;
    if (o.denoise && opt.spp < 2)
      throw UsageError(o.scenePath + " asks for " + std::to_string(opt.spp) +
                       " sample a pixel, and --denoise needs two halves: pass --spp 2 or more");
  }
  if (!r.count("max-depth")) opt.maxDepth = std::min(d.maxDepth, 1000);  // as --max-depth allows
  if (!r.count("output") && !d.output.empty()) {
    // The file's name in the default output folder; a format this build cannot write becomes .pfm (linear too).
    std::string name = d.output.substr(d.output.find_last_of('/') + 1);
    // A file without a name of its own (pbrt-v4's default "pbrt.exr", or a folder) is named after the scene.
    if (name.empty() || d.output == "pbrt.exr") {
      std::string stem = o.scenePath.substr(o.scenePath.find_last_of('/') + 1);
      stem = stem.substr(0, stem.find('.'));
      name = (stem.empty() ? std::string("render") : stem) + ".exr";
    }
    const ImageFormat format = FormatFromPath(name);
    if (format == ImageFormat::kUnknown || (format == ImageFormat::kExr && !ExrSupported()))
      name = name.substr(0, name.find_last_of('.')) + ".pfm";
    o.outPath = FolderOf(o.outPath) + "/" + name;
  }
  return kContinue;
}

// The default output folder (output/) is made when missing; a folder the user named must exist.
void MakeDefaultOutputFolder(const cxxopts::ParseResult& r, const CliOptions& o) {
  const bool measuring = o.command != CliCommand::kRender;
  if (r.count(measuring ? "report" : "output")) return;
  const std::string dir = FolderOf(measuring ? o.reportPath : o.outPath);
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 && mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    throw UsageError("cannot create the default output folder '" + dir + "' (" + std::strerror(errno) +
                     "); pass -o PATH");
}

// Refuses before rendering what would fail after it: an unknown image format or an unwritable folder.
void CheckOutputs(const CliOptions& o) {
  const bool measuring = o.command != CliCommand::kRender;
  if (!measuring && FormatFromPath(o.outPath) == ImageFormat::kUnknown)
    throw UsageError("--output " + o.outPath + ": unknown extension (use .png, .hdr, .pfm or .exr)");
  if (!measuring && FormatFromPath(o.outPath) == ImageFormat::kExr && !ExrSupported())
    throw UsageError("--output " + o.outPath +
                     ": this build has no OpenEXR support (apt-get install libopenexr-dev and rebuild)");
  if (o.exrHalf && (measuring || FormatFromPath(o.outPath) != ImageFormat::kExr))
    throw UsageError("--exr-half applies to .exr output only");
  if ((o.aovKinds || o.denoise) && measuring)
    throw UsageError("--aov and --denoise do not apply to --profile or --benchmark");
  if (o.render.adaptiveThreshold > 0.0f && measuring)
    throw UsageError("--adaptive does not apply to --profile or --benchmark (they measure fixed work)");
  if (o.render.adaptiveThreshold > 0.0f && (!o.checkpointPath.empty() || !o.resumePath.empty()))
    throw UsageError(
        "--adaptive cannot be checkpointed or resumed (a checkpoint keeps the sums, not each pixel's "
        "samples and spread)");
  if ((o.aovKinds & kAovVariance) && !o.resumePath.empty())
    throw UsageError("--aov variance cannot be resumed (a checkpoint keeps the sums, not the passes' spread)");
  if (measuring && (!o.checkpointPath.empty() || !o.resumePath.empty()))
    throw UsageError("--checkpoint and --resume do not apply to --profile or --benchmark");
  if (measuring)
    CheckWritablePath("--report", o.reportPath);
  else
    CheckWritablePath("--output", o.outPath);
  if (!o.checkpointPath.empty()) CheckWritablePath("--checkpoint", o.checkpointPath);
}

}  // namespace

int ParseCli(int argc, char** argv, CliOptions& options, bool otherRank) {
  std::vector<std::string> groups;
  cxxopts::Options cli = MakeOptionsSpec(groups);
  options.otherRank = otherRank;
  // Rank 0 prints the help and the errors; the other ranks, parsing the same arguments, only return the code.
  std::ostream& out = otherRank ? NullStream() : std::cout;
  std::ostream& err = otherRank ? NullStream() : std::cerr;
  std::vector<char*> args;
  std::vector<std::string> joined;  // what args point into after JoinDenoiseValue
  try {
    MakeRaysArgs makeRays;
    args = ExtractMakeRays(argc, argv, makeRays);
    JoinDenoiseValue(args, joined);
    auto r = cli.parse(static_cast<int>(args.size()), args.data());
    if (r.count("help")) {
      out << cli.help(groups)
          << "\nExit status: 0 success (also when --time stopped early), 1 scene, checkpoint or render error,\n"
             "2 usage error (also --resume with other settings, or under --denoise without the halves), 130/143\n"
             "interrupted by SIGINT/SIGTERM: the pass finishes and the image so far is written (a second signal\n"
             "exits at once).\n"
             "MPI builds: mpirun -np N tracer SCENE [flags] renders one frame with N ranks (docs/MPI.md).\n";
      return 0;
    }
    if (r.count("version")) {
      out << "tracer " << VersionString() << "\n";
      return 0;
    }
    if (!r.count("scene")) throw UsageError("no scene given (try --help)");
    // cxxopts leaves words after the scene unmatched; rendering the first and dropping the rest would hide a typo
    // or a glob that matched several files.
    if (!r.unmatched().empty()) {
      std::string extra;
      for (const std::string& word : r.unmatched()) extra += (extra.empty() ? "'" : ", '") + word + "'";
      throw UsageError("one scene per run: " + r["scene"].as<std::string>() + " is the scene, and " + extra +
                       (r.unmatched().size() > 1 ? " are" : " is") + " left over (render each scene on its own)");
    }
    options.scenePath = r["scene"].as<std::string>();
    options.outPath = r["output"].as<std::string>();
    ReadImageAndSampling(r, options);
    ReadLongRenders(r, options);
    ReadBackendAndVariants(r, options);
    ReadLightSampling(r, options.render);
    ReadProfiling(r, options);
    ReadCamera(r, options);
    ReadMakeRays(r, makeRays, options);
    ReadRayFiles(r, options);
    // A missing scene is reported as such, before any complaint about the output folder.
    struct stat st;
    if (!otherRank && stat(options.scenePath.c_str(), &st) != 0) {
      err << "tracer: error: " << options.scenePath << ": cannot open: " << std::strerror(errno) << "\n";
      return 1;
    }
    if (const int code = ApplySceneDefaults(r, options, err); code != kContinue) return code;
    if (!otherRank && options.traceRaysPath.empty() && options.makeRaysPath.empty()) {  // these write no image
      MakeDefaultOutputFolder(r, options);
      CheckOutputs(options);
    }
  } catch (const UsageError& e) {
    err << "tracer: usage error: " << e.what() << "\n";
    return 2;
  } catch (const cxxopts::exceptions::incorrect_argument_type& e) {
    err << "tracer: usage error: " << UnparsedValueMessage(e.what(), args) << "\n";
    return 2;
  } catch (const cxxopts::exceptions::exception& e) {
    err << "tracer: usage error: " << e.what() << " (try --help)\n";
    return 2;
  }
  return kContinue;
}

}  // namespace tracer

// @file main.cpp: the tracer command line: parse flags, load the scene, render on the GPU or the CPU, write.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxopts.hpp>
#include <iostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "tracer/host/backends.h"
#include "tracer/host/checkpoint.h"
#include "tracer/host/device_error.h"
#include "tracer/host/image_io.h"
#include "tracer/host/scene_data.h"
#include "tracer/host/scene_loader.h"
#include "tracer/host/tile_guide.h"
#if defined(TRACER_HAVE_CUDA)
#include "tracer/host/profile.h"
#endif

using namespace tracer;

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

// Frames the scene's bounding sphere in the vertical field of view, looking down -z.
Camera FramedCamera(const Scene& scene, float fovY, int w, int h) {
  Vec3 c = (scene.boundsMin + scene.boundsMax) * 0.5f;
  float r = 0.5f * Length(scene.boundsMax - scene.boundsMin);
  float half = 0.5f * fovY * kPi / 180.0f;
  if (w < h) half = std::atan(std::tan(half) * static_cast<float>(w) / static_cast<float>(h));
  float dist = r / std::sin(half) * 1.05f;
  return Camera::LookAt(c + Vec3(0.0f, 0.0f, dist), c, Vec3(0.0f, 1.0f, 0.0f), fovY, w, h);
}

volatile std::sig_atomic_t gSignal = 0;
void OnSignal(int sig) {
  if (gSignal != 0) std::_Exit(128 + sig);  // a second signal: stop at once
  gSignal = sig;
}

// ---- output paths: refuse before rendering what would fail after it --------------------------------------
std::string FolderOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
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
    throw UsageError(flag + " " + path + ": folder '" + dir + "' does not exist or is not writable (" + std::strerror(errno) + ")");
  if (!S_ISDIR(st.st_mode)) throw UsageError(flag + " " + path + ": '" + dir + "' is not a folder");
  std::string probe = dir + "/.tracer-probe-XXXXXX";
  int fd = mkstemp(probe.data());
  if (fd < 0)
    throw UsageError(flag + " " + path + ": folder '" + dir + "' does not exist or is not writable (" + std::strerror(errno) + ")");
  close(fd);
  unlink(probe.c_str());
}

// Empty when the render found no non-finite sample; else the message naming its pixel and depth.
std::string NonFiniteReport(const RenderResult& result) {
  const NonFiniteSample& nf = result.firstNonFinite;
  if (!nf.found) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "non-finite sample at pixel (%u, %u), path depth %u",
                nf.pixel % static_cast<uint32_t>(result.width), nf.pixel / static_cast<uint32_t>(result.width), nf.depth);
  return buf;
}

std::string FormatDuration(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options cli("tracer", "tracer: a wavefront path tracer for NVIDIA GPUs, with a CPU reference renderer.\n"
                                 "Renders an OBJ+MTL scene (emitters from MTL Ke) to .png (tone-mapped), .hdr or .pfm (linear).");
  cli.positional_help("SCENE.obj").show_positional_help();
  // clang-format off
  cli.add_options()
    ("scene", "OBJ scene to render", cxxopts::value<std::string>())
    ("o,output", "output image: .png, .hdr or .pfm (written atomically)", cxxopts::value<std::string>()->default_value("output/render.png"))
    ("h,help", "print this help and exit");
  cli.add_options("Camera (default: SCENE.camera beside the OBJ, else framed on the scene's bounds)")
    ("eye", "camera position x,y,z", cxxopts::value<std::string>())
    ("look-at", "point the camera looks at x,y,z", cxxopts::value<std::string>())
    ("up", "up vector x,y,z", cxxopts::value<std::string>()->default_value("0,1,0"))
    ("fov", "vertical field of view in degrees", cxxopts::value<float>())
    ("width", "image width in pixels", cxxopts::value<int>()->default_value("512"))
    ("height", "image height in pixels", cxxopts::value<int>()->default_value("512"));
  cli.add_options("Rendering")
    ("spp", "samples per pixel (default: 1024 on the GPU, 64 on the CPU)", cxxopts::value<int>())
    ("seed", "random seed; the same seed gives the same image", cxxopts::value<uint32_t>()->default_value("1"))
    ("max-depth", "maximum number of bounces", cxxopts::value<int>()->default_value("8"))
    ("exposure", "exposure in stops, applied to PNG output", cxxopts::value<float>()->default_value("0"))
    ("env", "constant environment radiance r,g,b for rays that leave the scene", cxxopts::value<std::string>()->default_value("0,0,0"))
    ("clamp", "firefly clamp: cap each contribution's max component (0 = off)", cxxopts::value<float>()->default_value("0"))
    ("time", "stop at the first pass boundary after this many seconds of rendering (0 = no limit)", cxxopts::value<double>()->default_value("0"))
    ("backend", "auto, cpu or cuda: auto uses the GPU when one is usable", cxxopts::value<std::string>()->default_value("auto"))
    ("threads", "CPU renderer threads (0 = all cores)", cxxopts::value<int>()->default_value("0"))
    ("paths-in-flight", "size of the path pool (0 = automatic: up to 2M on the GPU, 128K on the CPU)", cxxopts::value<long long>()->default_value("0"))
    ("check-nan", "stop at the first non-finite (NaN or Inf) sample and report its pixel and depth; writes no image")
    ("q,quiet", "no progress bar or summary on stderr; errors and warnings only")
    ("allow-outside-paths", "accept mtllib/texture paths outside the scene's folder");
  cli.add_options("Long renders (Ctrl-C or SIGTERM finishes the current pass, writes the image so far and exits 130/143; a second signal exits at once)")
    ("checkpoint", "save the film to FILE every --checkpoint-interval seconds, at the end and when interrupted (written atomically)", cxxopts::value<std::string>())
    ("checkpoint-interval", "seconds between checkpoints (0 = after every pass)", cxxopts::value<double>()->default_value("60"))
    ("resume", "continue the render saved in FILE by --checkpoint up to --spp; the settings must match", cxxopts::value<std::string>());
  cli.add_options("Naive twins of the GPU optimisations (same image, slower)")
    ("naive-layout", "array-of-structs ray/hit/path state with float3 fields and 4-byte loads")
    ("naive-compaction", "one atomicAdd per thread when pushing to queues")
    ("no-compaction", "keep dead paths in place and launch every stage over the whole pool")
    ("single-shade-kernel", "one shade kernel that switches on the material, instead of per-class queues")
    ("plain-loads", "read the BVH and scene through plain loads instead of the read-only cache path")
    ("pageable-readback", "read the film back through pageable instead of pinned host memory");
  cli.add_options("Profiling (GPU only)")
    ("profile", "measure every optimisation against its naive twin on SCENE; prints a table, writes --report")
    ("benchmark", "measure samples/s, rays/s (primary, extension, shadow, diffuse), per-kernel ms and peak memory")
    ("report", "JSON report of --profile / --benchmark", cxxopts::value<std::string>()->default_value("output/profile.json"))
    ("repeats", "timed repeats after one warm-up for --profile / --benchmark (the median is reported)", cxxopts::value<int>()->default_value("5"));
  cli.add_options("Light sampling")
    ("light-sampling", "power (alias table over emitter power) or tiles (guided by the min-plus tile pass)", cxxopts::value<std::string>()->default_value("power"))
    ("light-clusters", "maximum number of emitter clusters for tile guiding", cxxopts::value<int>()->default_value("256"))
    ("tile-size", "screen tile size in pixels for tile guiding", cxxopts::value<int>()->default_value("16"))
    ("tile-guide-mix", "weight alpha of the tile-guided pdf against the power pdf, in [0, 1)", cxxopts::value<float>()->default_value("0.5"))
    ("minplus", "min-plus propagation kernel: naive, coalesced, tiled or dpx (fixed point, Hopper DPX)", cxxopts::value<std::string>()->default_value("dpx"))
    ("naive-minplus", "same as --minplus naive: the uncoalesced min-plus kernel")
    ("naive-reduction", "reduce the tile statistics with neighbored pairs (divergent) instead of interleaved pairs and shuffles");
  // clang-format on
  cli.parse_positional({"scene"});

  RenderOptions opt;
  std::string scenePath, outPath, backend;
  float exposure = 0.0f;
  Vec3 env;
  bool explicitCamera = false;
  Vec3 eye, lookAt, up;
  float fov = 0.0f;
  bool haveFov = false;
  LoadOptions loadOptions;
  bool sppGiven = false;
  bool profile = false, benchmark = false;
  std::string reportPath;
  std::string checkpointPath, resumePath;
  bool checkNan = false;
  int repeats = 5;
  try {
    auto r = cli.parse(argc, argv);
    if (r.count("help")) {
      std::cout << cli.help() << "\nExit status: 0 success (also when --time stopped early), 1 scene, checkpoint or render error, 2 usage error\n"
                   "(also --resume with different settings), 130/143 interrupted by SIGINT/SIGTERM (image so far written).\n";
      return 0;
    }
    if (!r.count("scene")) throw UsageError("no scene given (try --help)");
    scenePath = r["scene"].as<std::string>();
    outPath = r["output"].as<std::string>();
    opt.width = r["width"].as<int>();
    opt.height = r["height"].as<int>();
    if (opt.width <= 0 || opt.height <= 0 || opt.width > kMaxFilmSide || opt.height > kMaxFilmSide)
      throw UsageError("--width and --height must be between 1 and " + std::to_string(kMaxFilmSide));
    // Bounds the film (3 uint64 per pixel) and keeps pixel and sample indices within 32 bits.
    if (static_cast<int64_t>(opt.width) * opt.height > kMaxFilmPixels)
      throw UsageError("--width " + std::to_string(opt.width) + " --height " + std::to_string(opt.height) + " is " +
                       std::to_string(static_cast<int64_t>(opt.width) * opt.height) + " pixels; the limit is " +
                       std::to_string(kMaxFilmPixels) + " (2^28)");
    sppGiven = r.count("spp") > 0;
    if (sppGiven) {
      opt.spp = r["spp"].as<int>();
      if (opt.spp <= 0) throw UsageError("--spp must be at least 1");
    }
    opt.seed = r["seed"].as<uint32_t>();
    opt.maxDepth = r["max-depth"].as<int>();
    if (opt.maxDepth < 0 || opt.maxDepth > 1000) throw UsageError("--max-depth must be between 0 and 1000");
    exposure = r["exposure"].as<float>();
    env = ParseVec3("env", r["env"].as<std::string>());
    if (env.x < 0 || env.y < 0 || env.z < 0) throw UsageError("--env must not be negative");
    opt.clamp = r["clamp"].as<float>();
    if (!(opt.clamp >= 0.0f)) throw UsageError("--clamp must be >= 0");
    opt.timeLimit = r["time"].as<double>();
    if (!(opt.timeLimit >= 0.0)) throw UsageError("--time must be >= 0");
    checkNan = r.count("check-nan") > 0;
    if (r.count("checkpoint")) checkpointPath = r["checkpoint"].as<std::string>();
    opt.checkpointSeconds = r["checkpoint-interval"].as<double>();
    if (!(opt.checkpointSeconds >= 0.0 && opt.checkpointSeconds < 1e9))
      throw UsageError("--checkpoint-interval must be a number of seconds >= 0");
    if (r.count("resume")) {
      resumePath = r["resume"].as<std::string>();
      struct stat st;
      if (stat(resumePath.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || access(resumePath.c_str(), R_OK) != 0)
        throw UsageError("--resume " + resumePath + ": no such readable file");
    }
    backend = r["backend"].as<std::string>();
    if (backend != "auto" && backend != "cpu" && backend != "cuda") throw UsageError("--backend must be auto, cpu or cuda");
    opt.threads = r["threads"].as<int>();
    if (opt.threads < 0) throw UsageError("--threads must be >= 0");
    opt.pathsInFlight = r["paths-in-flight"].as<long long>();
    if (opt.pathsInFlight < 0 || opt.pathsInFlight > (1LL << 28)) throw UsageError("--paths-in-flight must be between 0 and 2^28");
    opt.quiet = r.count("quiet") > 0;
    loadOptions.allowOutsidePaths = r.count("allow-outside-paths") > 0;
    opt.naiveLayout = r.count("naive-layout") > 0;
    if (r.count("naive-compaction") && r.count("no-compaction")) throw UsageError("--naive-compaction and --no-compaction exclude each other");
    if (r.count("naive-compaction")) opt.compaction = Compaction::kPerThreadAtomic;
    if (r.count("no-compaction")) opt.compaction = Compaction::kNone;
    opt.singleShadeKernel = r.count("single-shade-kernel") > 0;
    opt.plainLoads = r.count("plain-loads") > 0;
    opt.pageableReadback = r.count("pageable-readback") > 0;
    std::string ls = r["light-sampling"].as<std::string>();
    if (ls == "power") opt.lightSampling = LightSampling::kPower;
    else if (ls == "tiles") opt.lightSampling = LightSampling::kTiles;
    else throw UsageError("--light-sampling must be power or tiles");
    opt.lightClusters = r["light-clusters"].as<int>();
    if (opt.lightClusters < 1 || opt.lightClusters > 4096) throw UsageError("--light-clusters must be between 1 and 4096");
    opt.tileSize = r["tile-size"].as<int>();
    if (opt.tileSize < 1 || opt.tileSize > 1024) throw UsageError("--tile-size must be between 1 and 1024");
    opt.tileGuideMix = r["tile-guide-mix"].as<float>();
    if (!(opt.tileGuideMix >= 0.0f && opt.tileGuideMix < 1.0f)) throw UsageError("--tile-guide-mix must be in [0, 1)");
    if (!MinPlusKernelFromName(r["minplus"].as<std::string>(), &opt.minPlus))
      throw UsageError("--minplus must be naive, coalesced, tiled or dpx");
    if (r.count("naive-minplus")) opt.minPlus = MinPlusKernel::kNaive;
    opt.naiveReduction = r.count("naive-reduction") > 0;
    profile = r.count("profile") > 0;
    benchmark = r.count("benchmark") > 0;
    if (profile && benchmark) throw UsageError("--profile and --benchmark exclude each other");
    reportPath = r["report"].as<std::string>();
    repeats = r["repeats"].as<int>();
    if (repeats < 1 || repeats > 1000) throw UsageError("--repeats must be between 1 and 1000");
    if (r.count("eye") || r.count("look-at")) {
      if (!(r.count("eye") && r.count("look-at"))) throw UsageError("--eye and --look-at go together");
      explicitCamera = true;
      eye = ParseVec3("eye", r["eye"].as<std::string>());
      lookAt = ParseVec3("look-at", r["look-at"].as<std::string>());
      if (Length(lookAt - eye) == 0.0f) throw UsageError("--eye and --look-at must differ");
    }
    up = ParseVec3("up", r["up"].as<std::string>());
    if (r.count("fov")) {
      fov = r["fov"].as<float>();
      haveFov = true;
      if (!(fov > 0.0f && fov < 180.0f)) throw UsageError("--fov must be between 0 and 180 degrees");
    }
    if (!profile && !benchmark && FormatFromPath(outPath) == ImageFormat::kUnknown)
      throw UsageError("--output " + outPath + ": unknown extension (use .png, .hdr or .pfm)");
    if ((profile || benchmark) && (!checkpointPath.empty() || !resumePath.empty()))
      throw UsageError("--checkpoint and --resume do not apply to --profile or --benchmark");
    // The output folder must exist and be writable before we spend time rendering.
    if (profile || benchmark) CheckWritablePath("--report", reportPath);
    else CheckWritablePath("--output", outPath);
    if (!checkpointPath.empty()) CheckWritablePath("--checkpoint", checkpointPath);
  } catch (const UsageError& e) {
    std::cerr << "tracer: usage error: " << e.what() << "\n";
    return 2;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "tracer: usage error: " << e.what() << " (try --help)\n";
    return 2;
  }

  try {
    // Backend: the GPU when asked for or available, else the CPU, saying which.
    bool useCuda = false;
#if defined(TRACER_HAVE_CUDA)
    if (backend != "cpu") {
      std::string why;
      useCuda = CudaAvailable(why);
      if (!useCuda && backend == "cuda") {
        std::cerr << "tracer: error: --backend cuda, but no usable CUDA device: " << why << "\n";
        return 1;
      }
      if (!useCuda && (profile || benchmark)) {
        std::cerr << "tracer: error: --profile and --benchmark need a CUDA device: " << why << "\n";
        return 1;
      }
      if (!useCuda) std::cerr << "tracer: no usable CUDA device (" << why << "); rendering on the CPU\n";
    }
#else
    if (profile || benchmark) {
      std::cerr << "tracer: error: --profile and --benchmark need the CUDA renderer; this build has none (nvcc was not found at configure time)\n";
      return 1;
    }
    if (backend == "cuda") {
      std::cerr << "tracer: error: --backend cuda, but this build has no CUDA support (nvcc was not found at configure time)\n";
      return 1;
    }
    if (backend == "auto") std::cerr << "tracer: built without CUDA; rendering on the CPU\n";
#endif
    if (!sppGiven) opt.spp = useCuda ? 1024 : 64;

    // Signals from here on finish the current pass instead of killing the process; during loading
    // they stop it once loading returns (a second signal still exits at once).
    const bool rendering = !profile && !benchmark;
    if (rendering) {
      std::signal(SIGINT, OnSignal);
      std::signal(SIGTERM, OnSignal);
    }

    // Read the checkpoint before the scene: a bad file is reported without waiting for a BVH build.
    Checkpoint resumed;
    if (!resumePath.empty()) resumed = LoadCheckpoint(resumePath);

    auto tLoad = std::chrono::steady_clock::now();
    Scene scene = LoadScene(scenePath, loadOptions);
    if (!opt.quiet) std::cerr << scene.Summary() << "\n";
    Camera camera;
    if (explicitCamera) {
      camera = Camera::LookAt(eye, lookAt, up, haveFov ? fov : 45.0f, opt.width, opt.height);
    } else if (scene.camera.valid) {
      camera = Camera::LookAt(scene.camera.eye, scene.camera.lookAt, scene.camera.up, haveFov ? fov : scene.camera.fovY,
                              opt.width, opt.height);
    } else {
      camera = FramedCamera(scene, haveFov ? fov : 45.0f, opt.width, opt.height);
    }
    SceneData data = BuildSceneData(scene, camera, env);
    if (opt.lightSampling == LightSampling::kTiles || profile || benchmark) BuildLightClusters(data, opt.lightClusters);
    double loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - tLoad).count();
    if (!opt.quiet)
      std::fprintf(stderr, "loaded and built the BVH in %.2fs (%zu nodes, depth %d)\n", loadSeconds, data.bvh.nodes.size(),
                   data.bvh.depth);

#if defined(TRACER_HAVE_CUDA)
    if (profile || benchmark) {
      ProfileSettings ps;
      ps.sceneName = scenePath.substr(scenePath.find_last_of('/') + 1);
      ps.jsonPath = reportPath;
      ps.repeats = repeats;
      if (!sppGiven) opt.spp = 64;
      return profile ? RunProfile(data, opt, ps) : RunBenchmark(data, opt, ps);
    }
#endif
    if (gSignal) {
      std::fprintf(stderr, "tracer: interrupted while loading; nothing written\n");
      return 128 + gSignal;
    }

    // Long renders: what must match a checkpoint, the resumed film, and regular saves.
    const std::string settings = CheckpointSettings(scenePath, scene, data, opt);
    if (!resumePath.empty()) {
      std::string diff = DescribeSettingsMismatch(resumed.settings, settings);
      if (!diff.empty() || resumed.film.width != opt.width || resumed.film.height != opt.height) {
        std::cerr << "tracer: usage error: --resume " << resumePath
                  << ": the checkpoint was rendered with different settings: " << (diff.empty() ? "image size" : diff)
                  << "\n";
        return 2;
      }
      opt.resume = &resumed.film;
      if (resumed.film.sppDone >= opt.spp)
        std::fprintf(stderr, "tracer: %s already holds %d spp (--spp %d); writing it as it is\n", resumePath.c_str(),
                     resumed.film.sppDone, opt.spp);
      else if (!opt.quiet)
        std::fprintf(stderr, "resuming %s at %d of %d spp\n", resumePath.c_str(), resumed.film.sppDone, opt.spp);
    }
    int checkpointFailures = 0;
    if (!checkpointPath.empty()) {
      // A failed periodic save must not end a render that may have hours left: warn and go on.
      opt.checkpoint = [&](const HostFilm& film) {
        try {
          SaveCheckpoint(checkpointPath, film, opt.seed, settings);
        } catch (const std::exception& e) {
          if (checkpointFailures++ == 0) std::fprintf(stderr, "\ntracer: warning: %s\n", e.what());
        }
      };
    }
    opt.checkNan = checkNan;
    // Rates and the ETA count only this run's samples, not those a resumed checkpoint brought along.
    const int startSpp = opt.resume ? opt.resume->sppDone : 0;

    const bool showBar = !opt.quiet && isatty(STDERR_FILENO);
    ProgressFn progress = [&](int done, int total, const RenderStats& st) {
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
    RenderResult result;
#if defined(TRACER_HAVE_CUDA)
    if (useCuda) {
      try {
        result = RenderCuda(data, opt, progress);
      } catch (const DeviceError& e) {
        // Out of device memory leaves the context usable: under --backend auto, render on the CPU instead.
        // Any other CUDA error (a sticky one above all: illegal address, launch timeout) ends the run here,
        // with no further CUDA call.
        if (e.sticky || !e.outOfMemory || backend != "auto") throw;
        std::cerr << "tracer: " << e.what() << "\ntracer: falling back to the CPU renderer\n";
        useCuda = false;
      }
    }
    if (!useCuda)
#endif
      result = RenderCpu(data, opt, progress);
    if (showBar) std::fprintf(stderr, "\n");

    if (checkNan) {
      std::string nf = NonFiniteReport(result);
      if (!nf.empty()) {
        std::cerr << "tracer: error: --check-nan: " << nf << "; no image written\n";
        return 1;
      }
    }
    if (result.sppDone <= 0) {
      std::cerr << "tracer: interrupted before the first pass finished; no image written\n";
      return gSignal ? 128 + gSignal : 1;
    }
    // The checkpoint first: it can reproduce the image, the image cannot reproduce it.
    std::string checkpointError;
    if (!checkpointPath.empty()) {
      try {
        SaveCheckpoint(checkpointPath, result.film, opt.seed, settings);
      } catch (const std::exception& e) {
        checkpointError = e.what();
      }
    }
    WriteImage(outPath, result.rgb, result.width, result.height, exposure);
    const RenderStats& st = result.stats;
    double samples = static_cast<double>(result.width) * result.height * std::max(0, result.sppDone - startSpp);
    if (!opt.quiet) {
      const std::string resumedNote = startSpp > 0 ? " (" + std::to_string(startSpp) + " from the checkpoint)" : "";
      std::fprintf(stderr, "rendered on %s: %d spp%s in %.2fs, %.2f M samples/s, %.1f M rays/s (%.1f M extension, %.1f M shadow)\n",
                   result.backend.c_str(), result.sppDone, resumedNote.c_str(), st.seconds, samples / st.seconds / 1e6,
                   (st.extensionRays + st.shadowRays) / st.seconds / 1e6, st.extensionRays / st.seconds / 1e6,
                   st.shadowRays / st.seconds / 1e6);
      std::fprintf(stderr, "wrote %s\n", outPath.c_str());
      if (!checkpointPath.empty() && checkpointError.empty())
        std::fprintf(stderr, "saved checkpoint %s (%d spp)\n", checkpointPath.c_str(), result.sppDone);
    }
    if (st.droppedSamples)
      std::fprintf(stderr, "tracer: warning: %llu non-finite samples were dropped\n",
                   static_cast<unsigned long long>(st.droppedSamples));
    if (!checkpointError.empty()) {
      std::cerr << "tracer: error: " << checkpointError << "\n";
      return 1;
    }
    if (gSignal) {
      std::fprintf(stderr, "tracer: interrupted at %d of %d spp; wrote the image so far to %s%s%s\n", result.sppDone,
                   opt.spp, outPath.c_str(), checkpointPath.empty() ? "" : " and the checkpoint to ",
                   checkpointPath.c_str());
      return 128 + gSignal;
    }
    if (result.sppDone < opt.spp && !opt.quiet)
      std::fprintf(stderr, "stopped by --time after %d of %d spp\n", result.sppDone, opt.spp);
    return 0;
  } catch (const SceneError& e) {
    std::cerr << "tracer: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tracer: error: " << e.what() << "\n";
    return 1;
  }
}

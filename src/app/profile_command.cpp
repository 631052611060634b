// @file profile_command.cpp: the --profile and --benchmark command (cli.h's RunProfileCommand): load the scene, measure
// on the GPU (each rank on its own under MPI), write the report.
#include <string>

#include "app/cli.h"
#include "app/loaded_scene.h"
#include "app/scene_setup.h"
#include "app/select_backend.h"
#include "tracer/host/job.h"
#include "tracer/host/profile.h"

namespace tracer {
namespace {

// The report of rank r > 0 of an MPI job: report.json -> report.rank<r>.json.
std::string RankReportPath(const std::string& path, const Job& job) {
  if (job.Rank() == 0) return path;
  const size_t dot = path.find_last_of('.'), slash = path.find_last_of('/');
  const size_t at = dot != std::string::npos && (slash == std::string::npos || dot > slash) ? dot : path.size();
  return path.substr(0, at) + ".rank" + std::to_string(job.Rank()) + path.substr(at);
}

int Profile(CliOptions& cli, Job& job) {
  BackendChoice backend;
  if (int code = job.Agree(SelectBackend(cli.backend, true, backend, job.IsRoot())); code != kContinue) return code;
  if (job.Ranks() > 1) backend.rankDevice = job.LocalRank();
  RenderOptions& opt = cli.render;
  // The profiler renders every variant at 64 spp unless --spp says otherwise, whichever backend was picked.
  if (!cli.sppGiven) opt.spp = 64;
  LoadedScene loaded;
  const int loadCode = job.ShareScene(
      [&] {
        // the profiler times tile guiding too
        loaded = LoadAndBuild(cli, true, ChooseBvhBuilder(cli.bvhBuilder, backend));
        return kContinue;
      },
      loaded.data, false);
  if (loadCode != kContinue) return loadCode;
  job.SceneSent();  // before any rank measures: the ranks measure at the same time
  ProfileSettings ps;
  ps.sceneName = cli.scenePath.substr(cli.scenePath.find_last_of('/') + 1);
  ps.jsonPath = RankReportPath(cli.reportPath, job);
  ps.repeats = cli.repeats;
  ps.featureSamples = cli.aovSamples;
  double samplesPerSecond = 0.0;
  ps.samplesPerSecond = &samplesPerSecond;
  const int code = RunGpuProfiler(cli.command == CliCommand::kBenchmark, backend, loaded.data, opt, ps);
  if (job.Ranks() == 1) return code;
  // Each rank measured on its own device: per rank and in total on rank 0.
  job.ReportThroughput(samplesPerSecond);
  const int agreed = job.Agree(code == 0 ? kContinue : code);
  return agreed == kContinue ? 0 : agreed;
}

}  // namespace

int RunProfileCommand(CliOptions& options, Job& job) { return ReportingErrors(Profile, options, job); }

}  // namespace tracer

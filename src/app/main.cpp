// @file main.cpp: the tracer command line: join the job (MPI under mpirun), parse the flags, then run the render,
// profile, trace-rays or make-rays command.
#include <cstdio>
#include <memory>

#include "app/cli.h"
#include "app/start_job.h"

int main(int argc, char** argv) {
  std::unique_ptr<tracer::Job> job = tracer::StartJob(argc, argv);
  if (!job) return 1;
  tracer::CliOptions options;
  // Only rank 0 checks the files and prints; a usage error there ends every rank with its code.
  const int code = job->Agree(tracer::ParseCli(argc, argv, options, !job->IsRoot()));
  if (code != tracer::kContinue) return code;
  const bool oneProcessOnly =
      !options.traceRaysPath.empty() || !options.makeRaysPath.empty() || !options.dumpRaysDir.empty();
  if (oneProcessOnly && job->Ranks() > 1) {
    if (job->IsRoot())
      std::fprintf(stderr,
                   "tracer: usage error: --trace-rays, --make-rays and --dump-rays run in one process: start them "
                   "without mpirun\n");
    return 2;
  }
  if (!options.traceRaysPath.empty()) return tracer::RunTraceRaysCommand(options);
  if (!options.makeRaysPath.empty()) return tracer::RunMakeRaysCommand(options);
  // Under MPI: the same build, arguments and (where a rank can read it) scene file on every rank.
  if (int same = job->CheckSameInputs(options.scenePath, argc, argv); same != tracer::kContinue) return same;
  if (options.command == tracer::CliCommand::kRender) return tracer::RunRenderCommand(options, *job);
  return tracer::RunProfileCommand(options, *job);
}

// @file main.cpp: the tracer command line: parse the flags, then run the render, profile, trace-rays or make-rays
// command.
#include "tracer/host/cli.h"

int main(int argc, char** argv) {
  tracer::CliOptions options;
  const int code = tracer::ParseCli(argc, argv, options);
  if (code != tracer::kCliContinue) return code;
  if (!options.traceRaysPath.empty()) return tracer::RunTraceRaysCommand(options);
  if (!options.makeRaysPath.empty()) return tracer::RunMakeRaysCommand(options);
  if (options.command == tracer::CliCommand::kRender) return tracer::RunRenderCommand(options);
  return tracer::RunProfileCommand(options);
}

// @file job.cpp: Job alone, and what an MPI launcher's environment says.
#include "tracer/host/job.h"

#include <cstdio>
#include <cstdlib>

namespace tracer {

const std::vector<unsigned char>& Job::RootDeviceScene() const {
  static const std::vector<unsigned char> none;
  return none;
}

void Job::Abort(const std::string& message) {
  std::fprintf(stderr, "tracer: error: %s\n", message.c_str());
  std::exit(1);
}

int LauncherRanks() {
  // Open MPI's mpirun, then MPICH's and Intel MPI's Hydra (PMI), then a PMIx launcher that gives no size.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name)) return std::atoi(v) > 0 ? std::atoi(v) : -1;
  return std::getenv("PMIX_RANK") ? -1 : 0;
}

}  // namespace tracer

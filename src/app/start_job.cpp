// @file start_job.cpp: every `#if TRACER_HAVE_MPI` of the app: which job this process belongs to.
#include "start_job.h"

#include <cstdio>

#if defined(TRACER_HAVE_MPI)
#include "tracer/host/mpi_driver.h"
#endif

namespace tracer {

std::unique_ptr<Job> StartJob(int& argc, char**& argv) {
  const int launched = LauncherRanks();
#if defined(TRACER_HAVE_MPI)
  if (launched != 0) return StartMpiJob(argc, argv);
#else
  (void)argc, (void)argv;
  if (launched > 1) {
    std::fprintf(stderr,
                 "tracer: error: started by an MPI launcher (mpirun) as one of %d processes, but this build has no MPI "
                 "support (install libopenmpi-dev and rebuild); run it without mpirun\n",
                 launched);
    return nullptr;
  }
#endif
  return std::make_unique<Job>();
}

}  // namespace tracer

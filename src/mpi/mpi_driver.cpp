// @file mpi_driver.cpp: StartMpiJob and WatchdogSeconds (mpi_driver.h): MPI started, and the job that follows, one
// rank alone or the ranks of an MpiJob (mpi_job.h).
#include "tracer/host/mpi_driver.h"

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <memory>

#include "mpi_job.h"
#include "tracer/host/knobs.h"

namespace tracer {
namespace {

// One rank alone under mpirun: renders as without it, and finalises MPI at the end.
class SingleRankJob final : public Job {
 public:
  ~SingleRankJob() override { MPI_Finalize(); }
};

}  // namespace

double WatchdogSeconds() { return knobs::MpiWatchdogSeconds(); }

std::unique_ptr<Job> StartMpiJob(int& argc, char**& argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "tracer: error: MPI_Init_thread failed\n");
    return nullptr;
  }
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks == 1) return std::make_unique<SingleRankJob>();
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      std::fprintf(stderr,
                   "tracer: error: this MPI library provides thread level %d, not MPI_THREAD_MULTIPLE, which the "
                   "dispatcher thread of rank 0 needs\n",
                   provided);
    MPI_Finalize();
    return nullptr;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  try {
    return std::make_unique<mpi::MpiJob>();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tracer: error: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
    return nullptr;
  }
}

}  // namespace tracer

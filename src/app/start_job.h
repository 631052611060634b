// @file start_job.h: the app's one view of whether this build has MPI: the job this process is part of.
#pragma once
#include <memory>

#include "tracer/host/job.h"

namespace tracer {

// Under an MPI launcher with MPI built in: the MPI job (mpi_driver.h); otherwise this process alone. Returns null
// after printing why when the job cannot run: MPI failed to start, or an MPI launcher started several
// processes of a build without MPI (each would render the whole frame and write the same file).
std::unique_ptr<Job> StartJob(int& argc, char**& argv);

}  // namespace tracer

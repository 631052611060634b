// @file mpi_driver.h: one frame rendered by the ranks of an MPI job (`mpirun -np N tracer SCENE ...`). Built only
// when CMake finds MPI (TRACER_HAVE_MPI); the commands see it only as a Job (job.h).
//
//   - Rank 0 checks that every rank runs the same build with the same arguments and, where a rank can read the
//     scene file, the same file; then it loads the scene, builds the BVH and broadcasts the scene arrays
//     (MPI_Bcast). The other ranks neither parse nor build.
//   - Each rank drives one backend: the GPU of its node-local rank modulo the visible devices, or the CPU.
//   - A dispatcher thread on rank 0 hands out passes (sample ranges) one at a time as ranks ask for work, so a
//     slow rank takes fewer. The sequence of passes is the one a single process would render (rank 0's pool
//     size decides it). Steps that every rank takes together wait until no rank renders: tile-guide refreshes
//     (each rank computes the statistics of its share of the tiles, combined by MPI_Allreduce), checkpoints and
//     the end (the 64-bit fixed-point films summed by MPI_Reduce on rank 0, which writes). The image is
//     therefore byte-identical to one process's for any number of ranks.
//   - --time, signals (a rank's SIGINT/SIGTERM stops the dispatcher; the partial image is written) and
//     --check-nan stop every rank at a pass boundary. A rank that fails prints its error and calls MPI_Abort;
//     the dispatcher ends the job when a rank stops answering (TRACER_MPI_WATCHDOG_SECONDS).
#pragma once
#include <memory>

#include "tracer/host/job.h"

namespace tracer {

// Starts MPI (MPI_Init_thread, MPI_THREAD_MULTIPLE: the dispatcher is a thread of rank 0). With one rank the
// job renders as one process alone; MPI is finalized when the job is destroyed. Returns null after printing
// why when MPI cannot run the job.
std::unique_ptr<Job> StartMpiJob(int& argc, char**& argv);

// Seconds a rank may take over one pass before the dispatcher ends the job: at least this (the
// TRACER_MPI_WATCHDOG_SECONDS environment variable, default 300; 0 turns the watchdog off), and at least 20 times
// the longest pass any rank has finished.
double WatchdogSeconds();

}  // namespace tracer

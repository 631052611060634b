// @file mpi_calls.h: the MPI calls that every part of tracer_mpi makes: checked, waited for without spinning a
// core, and cut to MPI's int counts.
#pragma once
#include <mpi.h>

#include <cstddef>

namespace tracer::mpi {

// The communicators return errors (MPI_ERRORS_RETURN); each call is checked and a failure thrown with its place,
// to end in MpiJob::Abort.
void CheckMpi(int rc, const char* expr, const char* file, int line);
#define TRACER_MPI_CHECK(expr) ::tracer::mpi::CheckMpi((expr), #expr, __FILE__, __LINE__)

// Waits for a request without spinning a core: under a CPU job the ranks share the cores with the renderers,
// and while rank 0 builds the BVH the others would otherwise busy-poll beside it.
void WaitPolitely(MPI_Request& request, MPI_Status* status = MPI_STATUS_IGNORE);

// Rank 0's `value` on every rank of `comm` (waited for politely).
int BcastInt(int value, MPI_Comm comm);

// Rank 0's bytes on every rank of `comm`. MPI counts are ints: large arrays go in chunks of 1 GiB.
void BcastBytes(void* data, size_t bytes, MPI_Comm comm);

// Integer sums to rank 0, in place there, 128K values (1 MiB) at a time.
void ReduceSum(unsigned long long* data, size_t n, bool root, MPI_Comm comm);

}  // namespace tracer::mpi

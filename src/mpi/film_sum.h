// @file film_sum.h: FilmSum, the sum of every rank's film on rank 0: in shared memory among the ranks of a node,
// then MPI_Reduce among the nodes.
//
// The ranks of a node add their films in shared memory: an MPI shared-memory window holds one film per rank, each
// rank reads its backend's film into its own part, and after a barrier each adds one slice of every part into the
// first part, so that the node's ranks add in parallel at memory speed instead of passing 47.5 MiB (a 1080p film)
// through a reduction tree. Each node's sum then goes to rank 0 with MPI_Reduce, 1 MiB at a time (ReduceSum), among
// the nodes' first ranks. Integers: the order of the additions does not change a bit of the image.
// TRACER_MPI_SHARED_FILM=0 makes every rank a node of its own (one MPI_Reduce over all ranks, as across nodes): the
// naive twin, and the multi-node path on one machine for the tests; =K (2 or more) groups of K ranks, so that the
// tests also see several groups of several ranks.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "tracer/host/thread_pool.h"

namespace tracer::mpi {

class FilmSum {
 public:
  // Collective over `node` (world rank 0 is first there and in `leaders`, MPI_COMM_NULL on the other ranks).
  FilmSum(MPI_Comm node, MPI_Comm leaders, size_t values);
  // Collective: every rank of the node calls it (MpiJob's destructor: not after MPI_Abort).
  void Free();
  ~FilmSum();
  unsigned long long* Mine() { return parts_[static_cast<size_t>(nodeRank_)]; }
  size_t Values() const { return n_; }
  int Ranks() const { return nodeRanks_; }  // in this rank's node
  void Ready() {
    if (touch_.joinable()) touch_.join();
  }
  // After every rank of the node wrote Mine(): the sum of every rank's film into `out` on world rank 0.
  void Sum(unsigned long long* out, bool root);

 private:
  void Barrier();
  static constexpr size_t kChunk = size_t(1) << 16;  // values (512 KiB) per task
  MPI_Comm node_, leaders_;
  size_t n_;
  int nodeRank_ = 0, nodeRanks_ = 1;
  std::unique_ptr<ThreadPool> pool_;
  MPI_Win win_ = MPI_WIN_NULL;
  std::vector<unsigned long long*> parts_;
  std::thread touch_;
};

}  // namespace tracer::mpi

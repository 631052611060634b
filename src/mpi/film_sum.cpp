// @file film_sum.cpp: FilmSum (film_sum.h): the shared-memory window, the node's parallel adds and the reduction
// among the nodes.
#include "film_sum.h"

#include <algorithm>
#include <cstring>

#include "mpi_calls.h"

namespace tracer::mpi {

FilmSum::FilmSum(MPI_Comm node, MPI_Comm leaders, size_t values) : node_(node), leaders_(leaders), n_(values) {
  TRACER_MPI_CHECK(MPI_Comm_rank(node_, &nodeRank_));
  TRACER_MPI_CHECK(MPI_Comm_size(node_, &nodeRanks_));
  // Threads for the adds and rank 0's copy: the node's cores shared among its ranks, at most 8 (memory bandwidth).
  pool_ = std::make_unique<ThreadPool>(std::clamp(ThreadPool::CoresAvailable() / nodeRanks_, 1, 8));
  void* base = nullptr;
  TRACER_MPI_CHECK(MPI_Win_allocate_shared(static_cast<MPI_Aint>(n_ * sizeof(unsigned long long)),
                                           sizeof(unsigned long long), MPI_INFO_NULL, node_, &base, &win_));
  TRACER_MPI_CHECK(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN));  // (windows do not inherit it)
  TRACER_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));
  for (int r = 0; r < nodeRanks_; ++r) {
    MPI_Aint bytes = 0;
    int unit = 0;
    void* part = nullptr;
    TRACER_MPI_CHECK(MPI_Win_shared_query(win_, r, &bytes, &unit, &part));
    parts_.push_back(static_cast<unsigned long long*>(part));
  }
  // The part's pages faulted in while the passes render, not after the last.
  touch_ = std::thread([p = Mine(), n = n_] { std::memset(p, 0, n * sizeof(unsigned long long)); });
}

void FilmSum::Free() {
  Ready();  // (a job that ends before it renders, a bad --resume say, would free the part under the thread)
  TRACER_MPI_CHECK(MPI_Win_unlock_all(win_));
  TRACER_MPI_CHECK(MPI_Win_free(&win_));
}

FilmSum::~FilmSum() { Ready(); }

void FilmSum::Sum(unsigned long long* out, bool root) {
  Barrier();
  const size_t begin = n_ * static_cast<size_t>(nodeRank_) / static_cast<size_t>(nodeRanks_),
               end = n_ * static_cast<size_t>(nodeRank_ + 1) / static_cast<size_t>(nodeRanks_);
  unsigned long long* first = parts_[0];
  pool_->ParallelFor(end - begin, kChunk, [&](size_t b, size_t e) {
    for (int r = 1; r < nodeRanks_; ++r) {
      const unsigned long long* p = parts_[static_cast<size_t>(r)];
      for (size_t i = begin + b; i < begin + e; ++i) first[i] += p[i];
    }
  });
  Barrier();
  if (leaders_ != MPI_COMM_NULL) ReduceSum(first, n_, root, leaders_);
  if (root) pool_->ParallelFor(n_, kChunk, [&](size_t b, size_t e) { std::copy(first + b, first + e, out + b); });
  Barrier();  // (no rank writes its part again before rank 0 has read the sum)
}

void FilmSum::Barrier() {
  TRACER_MPI_CHECK(MPI_Win_sync(win_));
  TRACER_MPI_CHECK(MPI_Barrier(node_));
  TRACER_MPI_CHECK(MPI_Win_sync(win_));
}

}  // namespace tracer::mpi

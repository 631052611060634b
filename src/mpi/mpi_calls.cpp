// @file mpi_calls.cpp: the checked MPI calls of mpi_calls.h.
#include "mpi_calls.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace tracer::mpi {

void CheckMpi(int rc, const char* expr, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int n = 0;
  MPI_Error_string(rc, text, &n);
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + " " + expr + ": " + text);
}

void WaitPolitely(MPI_Request& request, MPI_Status* status) {
  int done = 0;
  for (int polls = 0;; ++polls) {
    TRACER_MPI_CHECK(MPI_Test(&request, &done, status));
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(polls < 20 ? 50 : 1000));
  }
}

int BcastInt(int value, MPI_Comm comm) {
  MPI_Request request;
  TRACER_MPI_CHECK(MPI_Ibcast(&value, 1, MPI_INT, 0, comm, &request));
  WaitPolitely(request);
  return value;
}

void BcastBytes(void* data, size_t bytes, MPI_Comm comm) {
  constexpr size_t kChunk = size_t(1) << 30;
  char* p = static_cast<char*>(data);
  for (size_t off = 0; off < bytes; off += kChunk)
    TRACER_MPI_CHECK(MPI_Bcast(p + off, static_cast<int>(std::min(kChunk, bytes - off)), MPI_BYTE, 0, comm));
}

// In pieces because Open MPI's reduction takes a temporary buffer as large as the message on the root: above
// 32 MiB glibc maps it fresh for every call and unmaps it after, so a whole film paid a page fault per page on the
// root each time, while buffers of 1 MiB come back from the heap already mapped (docs/PERFORMANCE.md).
void ReduceSum(unsigned long long* data, size_t n, bool root, MPI_Comm comm) {
  constexpr size_t kChunk = size_t(1) << 17;
  for (size_t off = 0; off < n; off += kChunk) {
    const int count = static_cast<int>(std::min(kChunk, n - off));
    TRACER_MPI_CHECK(
        MPI_Reduce(root ? MPI_IN_PLACE : data + off, data + off, count, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, comm));
  }
}

}  // namespace tracer::mpi

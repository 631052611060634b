// @file huge_pages.h: large host buffers backed by transparent huge pages, so that filling them first costs a
// page fault per 2 MiB instead of per 4 KiB.
#pragma once
#include <cstddef>

namespace tracer {

// Asks the kernel (madvise MADV_HUGEPAGE) to back the whole 2 MiB pages inside [data, data + bytes) with transparent
// huge pages; a no-op below 4 MiB, where THP is off, or off Linux. Useful only before the pages are first touched.
// Measured on a 2-core VM (THP "madvise"): 4 KiB faults cost ~10 us each, and the first touch of the 1 GB of a
// 10M-triangle scene's arrays took seconds.
void AdviseHugePages(void* data, size_t bytes);

// container.resize(n) from empty, with huge pages advised before the new elements are written (zeroed).
template <typename Container>
void ResizeOnHugePages(Container& container, size_t n) {
  Container().swap(container);  // new storage: its pages are not touched yet
  container.reserve(n);
  AdviseHugePages(container.data(), n * sizeof(*container.data()));
  container.resize(n);
}

}  // namespace tracer

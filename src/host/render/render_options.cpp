// @file render_options.cpp: names of the render options' enums as the CLI spells them.
#include "tracer/host/render_options.h"

namespace tracer {

const char* MinPlusKernelName(MinPlusKernel k) {
  switch (k) {
    case MinPlusKernel::kNaive:
      return "naive";
    case MinPlusKernel::kCoalesced:
      return "coalesced";
    case MinPlusKernel::kTiled:
      return "tiled";
    case MinPlusKernel::kDpx:
      return "dpx";
    case MinPlusKernel::kBand:
      return "band";
  }
  return "?";
}

bool MinPlusKernelFromName(const std::string& name, MinPlusKernel* k) {
  for (MinPlusKernel c : {MinPlusKernel::kNaive, MinPlusKernel::kCoalesced, MinPlusKernel::kTiled, MinPlusKernel::kDpx,
                          MinPlusKernel::kBand})
    if (name == MinPlusKernelName(c)) {
      *k = c;
      return true;
    }
  return false;
}

}  // namespace tracer

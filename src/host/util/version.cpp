// @file version.cpp: the version number and the build's commit, from the header the build writes.
#include "tracer/host/version.h"

#include "tracer_build_info.h"

namespace tracer {

const char* VersionNumber() { return TRACER_VERSION_NUMBER; }
const char* BuildCommit() { return TRACER_BUILD_COMMIT; }

std::string VersionString() {
  std::string s = VersionNumber();
  if (*BuildCommit()) s += std::string(" (") + BuildCommit() + ")";
  return s;
}

}  // namespace tracer

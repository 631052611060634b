// @file version.h: the tracer's version number and the commit it was built from.
#pragma once
#include <string>

namespace tracer {

// The version number, e.g. "0.9.0".
const char* VersionNumber();
// `git describe --always --dirty` of the source tree when the build ran; empty when it was built without git
// (from an exported tree).
const char* BuildCommit();
// "0.9.0 (7c9a6ec)", or "0.9.0" without a commit: what --version prints, reports record and MPI ranks compare.
std::string VersionString();

}  // namespace tracer

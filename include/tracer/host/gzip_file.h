// @file gzip_file.h: reading a whole file into memory, decompressing it when its name ends in ".gz" (the scene
// formats allow gzip-compressed PLY meshes and pbrt files).
#pragma once
#include <string>

namespace tracer {

// Whether this build can read .gz files (it was built with zlib).
bool GzipSupported();

// The whole file; a name ending in ".gz" is decompressed. Throws std::runtime_error "path: what" when the file
// cannot be read, is not valid gzip data, or is a .gz file in a build without zlib.
std::string ReadFileBytes(const std::string& path);

}  // namespace tracer

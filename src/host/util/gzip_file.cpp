// @file gzip_file.cpp: whole-file reads, through zlib's gzread for .gz names.
#include "tracer/host/gzip_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#ifndef TRACER_HAVE_ZLIB
#define TRACER_HAVE_ZLIB 0
#endif
#if TRACER_HAVE_ZLIB
#include <zlib.h>
#endif

namespace tracer {

namespace {

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string ReadPlain(const std::string& path) {
  // One read into a string of the file's size: a stream copied through a stringstream took longer than parsing a
  // 130 MB binary PLY.
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::string out;
  char chunk[1 << 16];
  if (std::fseek(f, 0, SEEK_END) == 0) {
    const long size = std::ftell(f);
    if (size > 0) out.reserve(static_cast<size_t>(size));
    std::rewind(f);
  }
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0) out.append(chunk, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw std::runtime_error(path + ": read error");
  return out;
}

#if TRACER_HAVE_ZLIB
std::string ReadGzip(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) throw std::runtime_error(path + ": cannot open (" + std::strerror(errno) + ")");
  // A bigger zlib buffer than its 8 KiB default: fewer read calls for meshes of hundreds of megabytes.
  gzbuffer(gz, 1 << 18);
  std::string out;
  std::string chunk(1 << 20, '\0');
  for (;;) {
    const int n = gzread(gz, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) {
      int code = 0;
      std::string what = gzerror(gz, &code);
      gzclose(gz);
      throw std::runtime_error(path + ": not valid gzip data (" + what + ")");
    }
    if (n == 0) break;
    out.append(chunk.data(), static_cast<size_t>(n));
  }
  // gzread stops quietly at a cut-off stream; gzclose_r reports it (Z_BUF_ERROR).
  if (gzclose_r(gz) != Z_OK) throw std::runtime_error(path + ": truncated gzip data");
  return out;
}
#endif

}  // namespace

bool GzipSupported() { return TRACER_HAVE_ZLIB != 0; }

std::string ReadFileBytes(const std::string& path) {
  if (!EndsWith(path, ".gz")) return ReadPlain(path);
#if TRACER_HAVE_ZLIB
  return ReadGzip(path);
#else
  throw std::runtime_error(path +
                           ": this build has no zlib, so it cannot read .gz files (apt-get install zlib1g-dev "
                           "and rebuild, or decompress the file)");
#endif
}

}  // namespace tracer

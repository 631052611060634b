// @file ray_file.cpp: reading and writing ray and hit files, and the --dump-rays writer.
#include "tracer/host/ray_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <regex>
#include <stdexcept>

#include "tracer/host/file_util.h"

// The records are written with memcpy from the host's structs: the format is little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "ray files are little-endian; this host is not");

namespace tracer {
namespace {

[[noreturn]] void Fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

template <class Record>
std::vector<Record> ReadRecords(const std::string& path, const char* kind) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    Fail(path, std::string("cannot read ") + kind + " file (" + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode)) Fail(path, std::string("not a regular file; expected a ") + kind + " file");
  const unsigned long long size = static_cast<unsigned long long>(st.st_size);
  if (size == 0) Fail(path, std::string("empty ") + kind + " file (no records)");
  if (size % sizeof(Record) != 0)
    Fail(path, std::string(kind) + " file size " + std::to_string(size) + " bytes is not a multiple of the " +
                   std::to_string(sizeof(Record)) + "-byte record");
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) Fail(path, std::string("cannot open ") + kind + " file (" + std::strerror(errno) + ")");
  std::vector<Record> out(static_cast<size_t>(size / sizeof(Record)));
  if (std::fread(out.data(), sizeof(Record), out.size(), f.get()) != out.size())
    Fail(path, std::string("cannot read ") + kind + " file (short read)");
  return out;
}

template <class Record>
void WriteRecords(const std::string& path, const std::vector<Record>& records) {
  AtomicWriteFile(path, [&](const std::string& tmp) {
    FilePtr f(std::fopen(tmp.c_str(), "wb"));
    if (!f) return false;
    if (!records.empty() && std::fwrite(records.data(), sizeof(Record), records.size(), f.get()) != records.size())
      return false;
    return std::fclose(f.release()) == 0;
  });
}

}  // namespace

bool RayRecordValid(const RayRecord& ray) {
  for (int k = 0; k < 3; ++k)
    if (!std::isfinite(ray.o[k]) || !std::isfinite(ray.d[k])) return false;
  if (ray.d[0] == 0.0f && ray.d[1] == 0.0f && ray.d[2] == 0.0f) return false;
  return !std::isnan(ray.tmax);
}

HitFileRecord MissHitRecord() { return HitFileRecord{std::numeric_limits<float>::infinity(), 0.0f, 0.0f, -1}; }

std::vector<RayRecord> ReadRayFile(const std::string& path) { return ReadRecords<RayRecord>(path, "ray"); }
std::vector<HitFileRecord> ReadHitFile(const std::string& path) { return ReadRecords<HitFileRecord>(path, "hit"); }
void WriteRayFile(const std::string& path, const std::vector<RayRecord>& rays) { WriteRecords(path, rays); }
void WriteHitFile(const std::string& path, const std::vector<HitFileRecord>& hits) { WriteRecords(path, hits); }

RayDumpWriter::RayDumpWriter(std::string dir) : dir_(std::move(dir)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (!fs::is_directory(dir_, ec)) Fail(dir_, "--dump-rays needs a folder, and this is not one and cannot be made");
  // Stale files of a deeper earlier dump would read as this render's bounces.
  static const std::regex kDumpName(R"(bounce-[0-9]+-(extension|shadow)\.bin)");
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec))
    if (std::regex_match(e.path().filename().string(), kDumpName)) fs::remove(e.path(), ec);
}

std::string RayDumpWriter::PathOf(int bounce, bool shadow) const {
  return dir_ + "/bounce-" + std::to_string(bounce) + (shadow ? "-shadow.bin" : "-extension.bin");
}

void RayDumpWriter::Append(int bounce, bool shadow, const std::vector<RayRecord>& rays) {
  if (rays.empty()) return;  // an empty file would not be a valid ray file
  const std::string path = PathOf(bounce, shadow);
  const bool first = started_.insert(path).second;
  FilePtr f(std::fopen(path.c_str(), first ? "wb" : "ab"));
  if (!f) Fail(path, std::string("cannot write ray dump (") + std::strerror(errno) + ")");
  if (std::fwrite(rays.data(), sizeof(RayRecord), rays.size(), f.get()) != rays.size())
    Fail(path, std::string("cannot write ray dump (") + std::strerror(errno) + ")");
  if (std::fclose(f.release()) != 0) Fail(path, std::string("cannot write ray dump (") + std::strerror(errno) + ")");
}

}  // namespace tracer

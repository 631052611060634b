// @file file_util.cpp: folder of a path, and atomic writes through a synced temporary file and a rename.
#include "tracer/host/file_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace tracer {

std::string FolderOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

void AtomicWriteFile(const std::string& path, const std::function<bool(const std::string& tmpPath)>& write) {
  // Same folder as the target, so rename() replaces it atomically.
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  auto fail = [&](const char* what) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": " + what + " (" + std::strerror(err) + ")");
  };
  errno = 0;
  if (!write(tmp)) fail("cannot write");
  // On disk before the rename: a crash right after it must not leave a renamed but empty file.
  const int fd = open(tmp.c_str(), O_RDONLY);
  if (fd < 0) fail("cannot reopen the temporary file");
  const bool synced = fsync(fd) == 0;
  close(fd);
  if (!synced) fail("fsync failed");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename into place");
  // Make the rename itself durable; a failure here loses nothing that a crash would not.
  const int dir = open(FolderOf(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    (void)fsync(dir);
    close(dir);
  }
}

}  // namespace tracer

// @file scene_files.cpp: finding and reading a scene's files under the loader's path rules (scene_files.h).
#include "scene_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tracer/host/huge_pages.h"

namespace tracer::loader {
namespace {

bool IsInside(const std::string& real, const std::string& folder) {
  const std::string prefix = folder == "/" ? "/" : folder + "/";
  return real.compare(0, prefix.size(), prefix) == 0;
}

std::string LastComponent(const std::string& name) {
  size_t slash = name.find_last_of('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

// The names as written, then each with '\' read as '/': files written on Windows say "textures\wall.png" or
// ".\skin.jpg". On Linux '\' is a legal file-name character, so the name as written is tried first.
std::vector<std::string> NameVariants(const std::vector<std::string>& written) {
  std::vector<std::string> names;
  auto add = [&names](const std::string& n) {
    if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const std::string& w : written) add(w);
  for (std::string w : written) {
    std::replace(w.begin(), w.end(), '\\', '/');
    add(w);
  }
  return names;
}

}  // namespace

// O_NONBLOCK keeps open() from waiting for a writer when the path is a FIFO; fstat then refuses it.
std::string ReadRegularFile(const std::string& path, size_t maxBytes, std::string* out) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::string("cannot open: ") + std::strerror(errno);
  struct stat st;
  std::string why;
  if (fstat(fd, &st) != 0) {
    why = std::string("cannot stat: ") + std::strerror(errno);
  } else if (S_ISDIR(st.st_mode)) {
    why = "is a directory, not a file";
  } else if (!S_ISREG(st.st_mode)) {
    why = "is not a regular file (device, FIFO or socket)";
  } else if (size_t(st.st_size) > maxBytes) {
    why = "is " + std::to_string(st.st_size) + " bytes; the limit is " + std::to_string(maxBytes);
  } else {
    ResizeOnHugePages(*out, size_t(st.st_size));
    size_t got = 0;
    while (got < out->size()) {
      ssize_t n = read(fd, &(*out)[got], out->size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        why = std::string("read failed: ") + std::strerror(errno);
        break;
      }
      if (n == 0) break;  // the file shrank while we read it
      got += size_t(n);
    }
    out->resize(got);
  }
  close(fd);
  return why;
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string RealPath(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (!resolved) return "";
  std::string result(resolved);
  std::free(resolved);
  return result;
}

std::string ReadSceneAsset(const AssetFolders& folders, const std::vector<std::string>& written,
                           const LoadOptions& options, std::string* resolved, std::string* contents) {
  const std::vector<std::string> names = NameVariants(written);
  if (names.empty()) return "empty file name";
  std::string refusal, missing;
  auto found = [&](const std::string& folder, const std::string& candidate) {
    std::string real = RealPath(candidate);
    if (real.empty()) {
      if (missing.empty()) missing = std::strerror(errno);
      return false;
    }
    if (!options.allowOutsidePaths && !IsInside(real, folder)) {
      if (refusal.empty())
        refusal = "resolves to " + real + ", outside " +
                  (folder == folders.scene ? "the scene's folder " : "the --texture-path folder ") + folder +
                  " (--allow-outside-paths permits it)";
      return false;
    }
    *resolved = real;
    return true;
  };
  bool ok = false;
  for (size_t i = 0; i < names.size() && !ok; ++i)
    ok = found(folders.scene, names[i][0] == '/' ? names[i] : folders.scene + "/" + names[i]);
  for (size_t d = 0; d < folders.extra.size() && !ok; ++d)
    for (size_t i = 0; i < names.size() && !ok; ++i)
      ok = (names[i][0] != '/' && found(folders.extra[d], folders.extra[d] + "/" + names[i])) ||
           found(folders.extra[d], folders.extra[d] + "/" + LastComponent(names[i]));
  if (!ok && !refusal.empty()) return refusal;
  if (!ok)
    return "not found (" + missing +
           (folders.extra.empty() ? "; --texture-path DIR adds a folder to search)"
                                  : "; not in any --texture-path folder either)");
  return ReadRegularFile(*resolved, options.maxFileBytes, contents);
}

}  // namespace tracer::loader

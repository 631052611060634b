// @file file_util.h: the one place for file-path helpers and atomic writes.
#pragma once
#include <functional>
#include <string>

namespace tracer {

// The folder part of a path: "a/b.png" -> "a", "b.png" -> ".", "/b.png" -> "/".
std::string FolderOf(const std::string& path);

// Writes `path` atomically: `write` is called with a temporary path in the same folder and returns false
// (with errno set) on failure; the temporary file is then flushed to disk (fsync), renamed over `path`, and
// the folder synced, so `path` holds either its previous content or the new one, never a torn file.
// On any failure the temporary file is removed and std::runtime_error is thrown with the message
// "<path>: <what> (<strerror>)", where <what> is e.g. "cannot write" or "cannot rename into place".
void AtomicWriteFile(const std::string& path, const std::function<bool(const std::string& tmpPath)>& write);

}  // namespace tracer

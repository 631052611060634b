// @file scene_files.h: how the loader finds and reads a scene's files: the OBJ, and the MTLs and textures it names.
#pragma once
#include <string>
#include <vector>

#include "tracer/host/scene_loader.h"

namespace tracer::loader {

// Reads a whole regular file into *out. Returns an empty string on success, else the reason.
std::string ReadRegularFile(const std::string& path, size_t maxBytes, std::string* out);

std::string DirectoryOf(const std::string& path);
// The real path (symlinks followed), or an empty string (errno tells why).
std::string RealPath(const std::string& path);

// Where files named by an OBJ or MTL are looked for: the scene's folder, then the --texture-path folders.
struct AssetFolders {
  std::string scene;               // real path of the OBJ's folder
  std::vector<std::string> extra;  // real paths of LoadOptions::searchPaths
};

// Resolves a file named by an OBJ or MTL (mtllib, map_Kd) and reads it: each name variant in the scene's folder,
// then in each --texture-path folder (the name, then its last component). Without allowOutsidePaths, the real
// path (symlinks followed) must lie inside the folder it was found through. Returns an empty string, or why not.
std::string ReadSceneAsset(const AssetFolders& folders, const std::vector<std::string>& written,
                           const LoadOptions& options, std::string* resolved, std::string* contents);

}  // namespace tracer::loader

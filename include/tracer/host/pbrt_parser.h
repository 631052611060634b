// @file pbrt_parser.h: reads a pbrt-v4 scene file (pbrt.org/fileformat-v4) into a PbrtScene: every directive of
// the format, Include and Import followed, the graphics state (transforms, materials, area lights, media,
// attributes) tracked as pbrt-v4's BasicSceneBuilder does. It checks the grammar and the parameter lists; what a
// material or a shape's parameters mean is left to whoever maps the scene onto a renderer.
#pragma once
#include <string>

#include "tracer/host/pbrt_scene.h"

namespace tracer {

struct PbrtParseOptions {
  int maxIncludeDepth = 32;  // nested Include/Import: deeper is taken for a cycle
};

// Parses the scene at `path` (a name ending in .gz is decompressed). Throws PbrtError, whose message begins with
// "file:line: ", at the first error: a token, directive or parameter list that is malformed, a directive out of
// its block (an option after WorldBegin, a shape before it), unbalanced AttributeBegin/AttributeEnd or
// ObjectBegin/ObjectEnd, an undefined named material or object, a file that cannot be read. What pbrt only warns
// about (an unknown coordinate system, an animated transform flattened, a deprecated directive) goes into
// PbrtScene::warnings.
//
// File names: Include and Import are looked up beside the including file first, then in the main file's folder
// (pbrt-v4's search directory, which is the only place pbrt itself looks). File-valued parameters (a plymesh's
// filename, an imagemap's) are kept as written; PbrtScene::ResolvePath resolves them as pbrt does, against the
// main file's folder.
PbrtScene ParsePbrtFile(const std::string& path, const PbrtParseOptions& options = {});

// The same for scene text held in memory; `fileName` names it in messages, and Include/Import and
// ResolvePath use `searchDir`.
PbrtScene ParsePbrtString(const std::string& text, const std::string& fileName = "<string>",
                          const std::string& searchDir = ".", const PbrtParseOptions& options = {});

}  // namespace tracer

// @file pbrt_parser.cpp: the grammar of pbrt-v4's scene files (pbrt.org/fileformat-v4; src/pbrt/parser.cpp):
// directives and their arguments, parameter lists, Include and Import. What the directives mean is PbrtBuilder's.
#include "tracer/host/pbrt_parser.h"

#include <sys/stat.h>

#include <climits>
#include <cmath>

#include "pbrt_builder.h"
#include "pbrt_params.h"
#include "tracer/host/file_util.h"
#include "tracer/host/pbrt_tokenizer.h"

namespace tracer {

namespace {

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

class Parser {
 public:
  Parser(PbrtScene& scene, const PbrtParseOptions& options) : scene_(scene), builder_(scene), options_(options) {}

  // Parses one file's tokens; `folder` is where its Include and Import look first.
  void Parse(PbrtTokenizer& tok, const std::string& folder, int depth);
  void Finish(const PbrtLoc& end) { builder_.Finish(end); }

 private:
  bool Options(PbrtTokenizer& tok, const std::string& name, const PbrtLoc& loc);
  bool World(PbrtTokenizer& tok, const std::string& name, const PbrtLoc& loc);
  bool Transforms(PbrtTokenizer& tok, const std::string& name, const PbrtLoc& loc);
  bool Structure(PbrtTokenizer& tok, const std::string& name, const PbrtLoc& loc, const std::string& folder, int depth);
  void ParseFile(const std::string& name, const PbrtLoc& loc, const std::string& folder, int depth, bool import);

  PbrtScene& scene_;
  PbrtBuilder builder_;
  PbrtParseOptions options_;
};

std::string ReadString(PbrtTokenizer& tok, const std::string& directive, const char* what) {
  PbrtToken t = tok.Next();
  if (t.kind != PbrtTokenKind::kString)
    throw PbrtError(tok.Loc(t), directive + ": expected " + what + " in quotes, found " + DescribeToken(t));
  return t.text;
}

double ReadNumber(PbrtTokenizer& tok, const std::string& directive) {
  PbrtToken t = tok.Next();
  if (t.kind != PbrtTokenKind::kNumber)
    throw PbrtError(tok.Loc(t), directive + ": expected a number, found " + DescribeToken(t));
  return t.number;
}

void ReadNumbers(PbrtTokenizer& tok, const std::string& directive, int n, double* out) {
  for (int i = 0; i < n; ++i) out[i] = ReadNumber(tok, directive);
}

// Transform and ConcatTransform: 16 numbers in brackets (pbrt requires them; they are optional here).
PbrtTransform ReadMatrix(PbrtTokenizer& tok, const std::string& directive) {
  const bool bracket = tok.Peek().kind == PbrtTokenKind::kOpen;
  if (bracket) tok.Next();
  double v[16];
  ReadNumbers(tok, directive, 16, v);
  if (bracket) {
    PbrtToken close = tok.Next();
    if (close.kind != PbrtTokenKind::kClose)
      throw PbrtError(tok.Loc(close), directive + ": expected ']' after 16 numbers, found " + DescribeToken(close));
  }
  return PbrtTransform::FromFileNumbers(v);
}

void Parser::Parse(PbrtTokenizer& tok, const std::string& folder, int depth) {
  for (;;) {
    PbrtToken t = tok.Next();
    if (t.kind == PbrtTokenKind::kEnd) return;
    const PbrtLoc loc = tok.Loc(t);
    if (t.kind != PbrtTokenKind::kWord) throw PbrtError(loc, "expected a directive, found " + DescribeToken(t));
    if (!Options(tok, t.text, loc) && !World(tok, t.text, loc) && !Transforms(tok, t.text, loc) &&
        !Structure(tok, t.text, loc, folder, depth))
      throw PbrtError(loc, "unknown directive \"" + t.text + "\"");
  }
}

// The options block's `Name "type" params` directives.
bool Parser::Options(PbrtTokenizer& tok, const std::string& name, const PbrtLoc& loc) {
  PbrtEntity* target = name == "Film"          ? &scene_.film
                       : name == "Sampler"     ? &scene_.sampler
                       : name == "Integrator"  ? &scene_.integrator
                       : name == "PixelFilter" ? &scene_.filter
                       : name == "Accelerator" ? &scene_.accelerator
                                               : nullptr;
  if (!target && name != "Camera") return false;
  builder_.Enter(name, loc, 'o');
  std::string type = ReadString(tok, name, "a type");
  PbrtParams params = ReadPbrtParams(tok, builder_);
  if (target)
    builder_.SetOption(*target, std::move(type), std::move(params), loc);
  else
    builder_.Camera(std::move(type), std::move(params), loc);
  return true;
}

// The world block's `Name "type-or-name" params` directives.
bool Parser::World(PbrtTokenizer& tok, const std::string& name, const PbrtLoc& loc) {
  using Method = void (PbrtBuilder::*)(std::string, PbrtParams, const PbrtLoc&);
  using NamedMethod = void (PbrtBuilder::*)(const std::string&, PbrtParams, const PbrtLoc&);
  Method typed = name == "Material"          ? &PbrtBuilder::Material
                 : name == "LightSource"     ? &PbrtBuilder::LightSource
                 : name == "AreaLightSource" ? &PbrtBuilder::AreaLightSource
                 : name == "Shape"           ? &PbrtBuilder::Shape
                                             : nullptr;
  NamedMethod named = name == "MakeNamedMaterial" ? &PbrtBuilder::MakeNamedMaterial
                      : name == "MakeNamedMedium" ? &PbrtBuilder::MakeNamedMedium
                      : name == "Attribute"       ? &PbrtBuilder::Attribute
                                                  : nullptr;
  if (typed) {
    builder_.Enter(name, loc, 'w');
    std::string type = ReadString(tok, name, "a type");
    (builder_.*typed)(std::move(type), ReadPbrtParams(tok, builder_), loc);
    return true;
  }
  if (named) {
    // pbrt-v4 allows a medium and attribute defaults before WorldBegin (the camera may sit in a medium).
    builder_.Enter(name, loc, name == "MakeNamedMaterial" ? 'w' : ' ');
    std::string n = ReadString(tok, name, name == "Attribute" ? "a target" : "a name");
    (builder_.*named)(n, ReadPbrtParams(tok, builder_), loc);
    return true;
  }
  if (name == "Texture") {
    builder_.Enter(name, loc, 'w');
    std::string texName = ReadString(tok, name, "a name");
    std::string kind = ReadString(tok, name, "a type (\"float\" or \"spectrum\")");
    std::string cls = ReadString(tok, name, "a class");
    builder_.Texture(texName, kind, std::move(cls), ReadPbrtParams(tok, builder_), loc);
    return true;
  }
  return false;
}

bool Parser::Transforms(PbrtTokenizer& tok, const std::string& name, const PbrtLoc& loc) {
  double v[9];
  if (name == "Identity") {
    builder_.Enter(name, loc, ' ');
    builder_.ApplyTransform(PbrtTransform(), true);
  } else if (name == "Translate" || name == "Scale") {
    builder_.Enter(name, loc, ' ');
    ReadNumbers(tok, name, 3, v);
    builder_.ApplyTransform(
        name == "Translate" ? PbrtTransform::Translate(v[0], v[1], v[2]) : PbrtTransform::Scale(v[0], v[1], v[2]),
        false);
  } else if (name == "Rotate" || name == "LookAt") {
    builder_.Enter(name, loc, ' ');
    ReadNumbers(tok, name, name == "Rotate" ? 4 : 9, v);
    try {
      builder_.ApplyTransform(name == "Rotate"
                                  ? PbrtTransform::Rotate(v[0], v[1], v[2], v[3])
                                  : PbrtTransform::LookAt({v[0], v[1], v[2]}, {v[3], v[4], v[5]}, {v[6], v[7], v[8]}),
                              false);
    } catch (const std::invalid_argument& e) {
      throw PbrtError(loc, name + ": " + e.what());
    }
  } else if (name == "Transform" || name == "ConcatTransform") {
    builder_.Enter(name, loc, ' ');
    builder_.ApplyTransform(ReadMatrix(tok, name), name == "Transform");
  } else if (name == "CoordinateSystem" || name == "CoordSysTransform") {
    builder_.Enter(name, loc, ' ');
    std::string n = ReadString(tok, name, "a name");
    if (name == "CoordinateSystem")
      builder_.CoordinateSystem(n);
    else
      builder_.CoordSysTransform(n, loc);
  } else if (name == "TransformTimes") {
    builder_.Enter(name, loc, 'o');
    ReadNumbers(tok, name, 2, v);
    builder_.TransformTimes(v[0], v[1], loc);
  } else if (name == "ActiveTransform") {
    builder_.Enter(name, loc, ' ');
    PbrtToken which = tok.Next();
    if (which.kind != PbrtTokenKind::kWord)
      throw PbrtError(tok.Loc(which),
                      "ActiveTransform: expected All, StartTime or EndTime, found " + DescribeToken(which));
    builder_.ActiveTransform(which.text, loc);
  } else if (name == "ReverseOrientation") {
    builder_.Enter(name, loc, 'w');
    builder_.ReverseOrientation();
  } else {
    return false;
  }
  return true;
}

bool Parser::Structure(PbrtTokenizer& tok, const std::string& name, const PbrtLoc& loc, const std::string& folder,
                       int depth) {
  if (name == "WorldBegin") {
    builder_.Enter(name, loc, ' ');
    builder_.WorldBegin(loc);
  } else if (name == "WorldEnd") {
    builder_.Enter(name, loc, ' ');
    builder_.WarnOnce("WorldEnd", loc, "WorldEnd is pbrt-v3's and has no meaning in pbrt-v4: ignored");
  } else if (name == "AttributeBegin" || name == "TransformBegin") {
    builder_.Enter(name, loc, 'w');
    if (name == "TransformBegin")
      builder_.WarnOnce("TransformBegin", loc,
                        "TransformBegin/TransformEnd are deprecated: read as "
                        "AttributeBegin/AttributeEnd, as pbrt-v4 does");
    builder_.AttributeBegin(loc);
  } else if (name == "AttributeEnd" || name == "TransformEnd") {
    builder_.Enter(name, loc, 'w');
    builder_.AttributeEnd(loc);
  } else if (name == "ObjectBegin" || name == "ObjectInstance" || name == "NamedMaterial") {
    builder_.Enter(name, loc, 'w');
    std::string n = ReadString(tok, name, "a name");
    if (name == "ObjectBegin")
      builder_.ObjectBegin(n, loc);
    else if (name == "ObjectInstance")
      builder_.ObjectInstance(n, loc);
    else
      builder_.NamedMaterial(n, loc);
  } else if (name == "ObjectEnd") {
    builder_.Enter(name, loc, 'w');
    builder_.ObjectEnd(loc);
  } else if (name == "Include" || name == "Import") {
    builder_.Enter(name, loc, name == "Import" ? 'w' : ' ');
    ParseFile(ReadString(tok, name, "a file name"), loc, folder, depth, name == "Import");
  } else if (name == "MediumInterface") {
    builder_.Enter(name, loc, ' ');
    std::string inside = ReadString(tok, name, "a medium name");
    // One name is both sides (pbrt-v4's parser).
    std::string outside = tok.Peek().kind == PbrtTokenKind::kString ? tok.Next().text : inside;
    builder_.MediumInterface(inside, outside);
  } else if (name == "ColorSpace") {
    builder_.Enter(name, loc, ' ');
    builder_.ColorSpace(ReadString(tok, name, "a color space name"), loc);
  } else if (name == "Option") {
    builder_.Enter(name, loc, ' ');
    std::string n = ReadString(tok, name, "a name");
    PbrtToken value = tok.Next();
    if (value.kind != PbrtTokenKind::kString && value.kind != PbrtTokenKind::kNumber &&
        value.kind != PbrtTokenKind::kBool)
      throw PbrtError(tok.Loc(value), "Option \"" + n + "\": expected a value, found " + DescribeToken(value));
    builder_.Option(n, value.text, loc);
  } else {
    return false;
  }
  return true;
}

void Parser::ParseFile(const std::string& name, const PbrtLoc& loc, const std::string& folder, int depth, bool import) {
  const std::string directive = import ? "Import" : "Include";
  if (depth + 1 > options_.maxIncludeDepth)
    throw PbrtError(loc, directive + " \"" + name + "\": files nested more than " +
                             std::to_string(options_.maxIncludeDepth) + " deep (do they include each other?)");
  std::string path = name;
  if (!name.empty() && name[0] != '/') {
    // Beside the including file first; then where pbrt-v4 looks, the main file's folder.
    path = folder + "/" + name;
    if (!FileExists(path) && FileExists(scene_.ResolvePath(name))) path = scene_.ResolvePath(name);
  }
  std::unique_ptr<PbrtTokenizer> tok;
  try {
    tok = PbrtTokenizer::FromFile(path);
  } catch (const PbrtError& e) {
    throw PbrtError(loc, directive + " \"" + name + "\": " + e.what());
  }
  scene_.files.push_back(path);
  if (import) builder_.BeginImport(loc);
  Parse(*tok, FolderOf(path), depth + 1);
  if (import) builder_.EndImport(loc);
}

}  // namespace

PbrtScene ParsePbrtFile(const std::string& path, const PbrtParseOptions& options) {
  std::unique_ptr<PbrtTokenizer> tok = PbrtTokenizer::FromFile(path);
  PbrtScene scene;
  scene.path = path;
  scene.searchDir = FolderOf(path);
  scene.files.push_back(path);
  Parser parser(scene, options);
  parser.Parse(*tok, scene.searchDir, 0);
  parser.Finish(tok->Loc(tok->Peek().line));
  return scene;
}

PbrtScene ParsePbrtString(const std::string& text, const std::string& fileName, const std::string& searchDir,
                          const PbrtParseOptions& options) {
  PbrtTokenizer tok(text, fileName);
  PbrtScene scene;
  scene.path = fileName;
  scene.searchDir = searchDir;
  scene.files.push_back(fileName);
  Parser parser(scene, options);
  parser.Parse(tok, searchDir, 0);
  parser.Finish(tok.Loc(tok.Peek().line));
  return scene;
}

}  // namespace tracer

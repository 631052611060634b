// @file ply_reader.cpp: a PLY reader of our own: a header parser, then one walk over the elements in file order,
// reading values through a cursor that is either ASCII or binary of either byte order. The format is Greg Turk's
// ("The PLY Polygon File Format", 1994); which properties count and how quads split follow pbrt-v4's plymesh
// (src/pbrt/util/mesh.cpp, TriQuadMesh::ReadPLY and ConvertToOnlyTriangles).
#include "tracer/host/ply_reader.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "tracer/host/gzip_file.h"

namespace tracer {

namespace {

enum class PlyType : uint8_t { kNone, kInt8, kUint8, kInt16, kUint16, kInt32, kUint32, kFloat32, kFloat64 };
enum class Format { kAscii, kBinaryLittle, kBinaryBig };

struct Property {
  std::string name;
  PlyType type = PlyType::kNone;
  PlyType countType = PlyType::kNone;  // kNone: a scalar; else a list with counts of this type
};

struct Element {
  std::string name;
  size_t count = 0;
  std::vector<Property> props;
  int line = 0;
};

struct Header {
  Format format = Format::kAscii;
  std::vector<Element> elements;
  size_t dataStart = 0;
};

PlyType TypeFromName(const std::string& s) {
  // The original names and the sized ones that later writers (and rply) use.
  static const std::pair<const char*, PlyType> kNames[] = {
      {"char", PlyType::kInt8},      {"int8", PlyType::kInt8},       {"uchar", PlyType::kUint8},
      {"uint8", PlyType::kUint8},    {"short", PlyType::kInt16},     {"int16", PlyType::kInt16},
      {"ushort", PlyType::kUint16},  {"uint16", PlyType::kUint16},   {"int", PlyType::kInt32},
      {"int32", PlyType::kInt32},    {"uint", PlyType::kUint32},     {"uint32", PlyType::kUint32},
      {"float", PlyType::kFloat32},  {"float32", PlyType::kFloat32}, {"double", PlyType::kFloat64},
      {"float64", PlyType::kFloat64}};
  for (const auto& [name, type] : kNames)
    if (s == name) return type;
  return PlyType::kNone;
}

size_t SizeOf(PlyType t) {
  switch (t) {
    case PlyType::kInt8:
    case PlyType::kUint8:
      return 1;
    case PlyType::kInt16:
    case PlyType::kUint16:
      return 2;
    case PlyType::kInt32:
    case PlyType::kUint32:
    case PlyType::kFloat32:
      return 4;
    case PlyType::kFloat64:
      return 8;
    case PlyType::kNone:
      return 0;
  }
  return 0;
}

bool IsInteger(PlyType t) { return t != PlyType::kFloat32 && t != PlyType::kFloat64 && t != PlyType::kNone; }

std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t begin = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > begin) words.emplace_back(line, begin, i - begin);
  }
  return words;
}

[[noreturn]] void HeaderFail(const std::string& name, int line, const std::string& message) {
  throw PlyError(name + ":" + std::to_string(line) + ": " + message);
}

void ParseProperty(const std::vector<std::string>& w, Header& h, const std::string& name, int line) {
  if (h.elements.empty()) HeaderFail(name, line, "a property before any element");
  Property p;
  if (w.size() == 5 && w[1] == "list") {
    p.countType = TypeFromName(w[2]);
    p.type = TypeFromName(w[3]);
    p.name = w[4];
    if (p.countType == PlyType::kNone || !IsInteger(p.countType))
      HeaderFail(name, line, "list count type \"" + w[2] + "\" is not an integer type");
  } else if (w.size() == 3) {
    p.type = TypeFromName(w[1]);
    p.name = w[2];
  } else {
    HeaderFail(name, line, "expected \"property TYPE NAME\" or \"property list COUNTTYPE TYPE NAME\"");
  }
  if (p.type == PlyType::kNone) HeaderFail(name, line, "unknown property type in \"property " + w[1] + " ...\"");
  h.elements.back().props.push_back(std::move(p));
}

void ParseElement(const std::vector<std::string>& w, Header& h, const std::string& name, int line) {
  Element e;
  unsigned long long count = 0;
  if (w.size() == 3) {
    auto r = std::from_chars(w[2].data(), w[2].data() + w[2].size(), count);
    if (r.ec != std::errc() || r.ptr != w[2].data() + w[2].size())
      HeaderFail(name, line, "element count \"" + w[2] + "\" is not a whole number");
  } else {
    HeaderFail(name, line, "expected \"element NAME COUNT\"");
  }
  e.name = w[1];
  e.count = static_cast<size_t>(count);
  e.line = line;
  h.elements.push_back(std::move(e));
}

Header ParseHeader(const std::string& bytes, const std::string& name) {
  Header h;
  size_t pos = 0;
  int line = 0;
  bool sawFormat = false;
  for (;;) {
    if (pos >= bytes.size()) HeaderFail(name, line, "the file ends before end_header");
    size_t eol = bytes.find('\n', pos);
    if (eol == std::string::npos) eol = bytes.size();
    const std::string text = bytes.substr(pos, eol - pos);
    pos = eol + 1;
    ++line;
    const std::vector<std::string> w = Words(text);
    if (line == 1) {
      if (w.size() != 1 || w[0] != "ply") HeaderFail(name, line, "not a PLY file (it does not start with \"ply\")");
      continue;
    }
    if (w.empty() || w[0] == "comment" || w[0] == "obj_info") continue;
    if (w[0] == "end_header") break;
    if (w[0] == "format") {
      if (w.size() != 3) HeaderFail(name, line, "expected \"format TYPE VERSION\"");
      if (w[1] == "ascii")
        h.format = Format::kAscii;
      else if (w[1] == "binary_little_endian")
        h.format = Format::kBinaryLittle;
      else if (w[1] == "binary_big_endian")
        h.format = Format::kBinaryBig;
      else
        HeaderFail(name, line, "unknown format \"" + w[1] + "\"");
      if (w[2] != "1.0") HeaderFail(name, line, "unknown format version \"" + w[2] + "\" (1.0 is the one there is)");
      sawFormat = true;
    } else if (w[0] == "element") {
      ParseElement(w, h, name, line);
    } else if (w[0] == "property") {
      ParseProperty(w, h, name, line);
    } else {
      HeaderFail(name, line, "unknown header line \"" + w[0] + "\"");
    }
  }
  if (!sawFormat) HeaderFail(name, line, "no format line before end_header");
  h.dataStart = pos;
  return h;
}

bool HostIsBigEndian() {
  const uint16_t one = 1;
  uint8_t first;
  std::memcpy(&first, &one, 1);
  return first == 0;
}

// Values in file order, ASCII or binary. Every read is bounds-checked; running out names the element and item.
class Cursor {
 public:
  Cursor(const std::string& bytes, const Header& h, const std::string& name)
      : p_(reinterpret_cast<const uint8_t*>(bytes.data()) + h.dataStart),
        end_(reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size()),
        format_(h.format),
        swap_((h.format == Format::kBinaryBig) != HostIsBigEndian()),
        name_(name),
        line_(CountLines(bytes, h.dataStart)) {}

  void At(const Element& e, size_t item) {
    element_ = &e;
    item_ = item;
  }
  double Value(PlyType t) { return format_ == Format::kAscii ? Ascii(t) : Binary(t); }
  [[noreturn]] void Fail(const std::string& message) const {
    const std::string where = format_ == Format::kAscii ? name_ + ":" + std::to_string(line_) : name_;
    throw PlyError(where + ": " + message);
  }
  std::string Where() const {
    return "element \"" + element_->name + "\" " + std::to_string(item_) + " of " + std::to_string(element_->count);
  }

 private:
  static int CountLines(const std::string& bytes, size_t end) {
    int n = 1;
    for (size_t i = 0; i < end && i < bytes.size(); ++i) n += bytes[i] == '\n';
    return n;
  }

  template <typename T>
  T Load() {
    T v;
    uint8_t b[sizeof(T)];
    std::memcpy(b, p_, sizeof(T));
    if (swap_)
      for (size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
    std::memcpy(&v, b, sizeof(T));
    p_ += sizeof(T);
    return v;
  }

  template <typename T>
  double LoadAs() {
    return static_cast<double>(Load<T>());
  }

  double Binary(PlyType t) {
    using LoadFn = double (Cursor::*)();
    // In the order of PlyType.
    static constexpr LoadFn kLoad[] = {nullptr,
                                       &Cursor::LoadAs<int8_t>,
                                       &Cursor::LoadAs<uint8_t>,
                                       &Cursor::LoadAs<int16_t>,
                                       &Cursor::LoadAs<uint16_t>,
                                       &Cursor::LoadAs<int32_t>,
                                       &Cursor::LoadAs<uint32_t>,
                                       &Cursor::LoadAs<float>,
                                       &Cursor::LoadAs<double>};
    if (t == PlyType::kNone) return 0.0;
    if (static_cast<size_t>(end_ - p_) < SizeOf(t)) Fail("truncated: the data ends in " + Where());
    return (this->*kLoad[static_cast<size_t>(t)])();
  }

  double Ascii(PlyType t) {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\r' || *p_ == '\n')) line_ += *p_++ == '\n';
    if (p_ >= end_) Fail("truncated: the data ends in " + Where());
    const char* begin = reinterpret_cast<const char*>(p_);
    const char* stop = begin;
    while (stop < reinterpret_cast<const char*>(end_) && !std::strchr(" \t\r\n", *stop)) ++stop;
    const char* first = begin + (*begin == '+' ? 1 : 0);  // from_chars takes no '+'
    double v = 0.0;
    auto r = std::from_chars(first, stop, v);
    if (r.ec != std::errc() || r.ptr != stop || (IsInteger(t) && v != std::floor(v)))
      Fail("\"" + std::string(begin, stop) + "\" is not " + (IsInteger(t) ? "an integer" : "a number") + " (" +
           Where() + ")");
    p_ = reinterpret_cast<const uint8_t*>(stop);
    return v;
  }

  const uint8_t* p_;
  const uint8_t* end_;
  Format format_;
  bool swap_;
  const std::string& name_;
  int line_;
  const Element* element_ = nullptr;
  size_t item_ = 0;
};

// A list's length, checked: a negative or fractional count is corrupt data.
size_t ListCount(Cursor& c, PlyType countType) {
  const double n = c.Value(countType);
  if (n < 0) c.Fail("a negative list length in " + c.Where());
  return static_cast<size_t>(n);
}

void SkipProperty(Cursor& c, const Property& p) {
  if (p.countType == PlyType::kNone) {
    c.Value(p.type);
    return;
  }
  for (size_t n = ListCount(c, p.countType); n > 0; --n) c.Value(p.type);
}

// Where each vertex property goes: 0..2 position, 3..5 normal, 6..7 uv; -1 nowhere.
std::vector<int> VertexSlots(const Element& e, bool* haveNormals, bool* haveUvs) {
  std::vector<int> slot(e.props.size(), -1);
  auto find = [&](const char* n) {
    for (size_t i = 0; i < e.props.size(); ++i)
      if (e.props[i].name == n && e.props[i].countType == PlyType::kNone) return static_cast<int>(i);
    return -1;
  };
  auto assign = [&](std::initializer_list<const char*> names, int firstSlot) {
    std::vector<int> found;
    for (const char* n : names) found.push_back(find(n));
    for (int f : found)
      if (f < 0) return false;
    for (size_t i = 0; i < found.size(); ++i) slot[static_cast<size_t>(found[i])] = firstSlot + static_cast<int>(i);
    return true;
  };
  if (!assign({"x", "y", "z"}, 0)) throw PlyError("no x, y and z properties in the vertex element");
  *haveNormals = assign({"nx", "ny", "nz"}, 3);
  *haveUvs = assign({"u", "v"}, 6) || assign({"s", "t"}, 6) || assign({"texture_u", "texture_v"}, 6) ||
             assign({"texture_s", "texture_t"}, 6);
  return slot;
}

void ReadVertices(Cursor& c, const Element& e, const std::string& name, PlyMesh& mesh) {
  bool haveNormals = false, haveUvs = false;
  std::vector<int> slot;
  try {
    slot = VertexSlots(e, &haveNormals, &haveUvs);
  } catch (const PlyError& err) {
    throw PlyError(name + ":" + std::to_string(e.line) + ": " + err.what());
  }
  mesh.positions.resize(3 * e.count);
  if (haveNormals) mesh.normals.resize(3 * e.count);
  if (haveUvs) mesh.uvs.resize(2 * e.count);
  for (size_t i = 0; i < e.count; ++i) {
    c.At(e, i);
    for (size_t j = 0; j < e.props.size(); ++j) {
      const int s = slot[j];
      if (s < 0) {
        SkipProperty(c, e.props[j]);
        continue;
      }
      const float v = static_cast<float>(c.Value(e.props[j].type));
      if (s < 3)
        mesh.positions[3 * i + static_cast<size_t>(s)] = v;
      else if (s < 6)
        mesh.normals[3 * i + static_cast<size_t>(s - 3)] = v;
      else
        mesh.uvs[2 * i + static_cast<size_t>(s - 6)] = v;
    }
  }
}

void ReadFaces(Cursor& c, const Element& e, const std::string& name, size_t vertexCount, PlyMesh& mesh) {
  int indicesProp = -1, faceIndexProp = -1;
  for (size_t j = 0; j < e.props.size(); ++j) {
    const Property& p = e.props[j];
    if ((p.name == "vertex_indices" || p.name == "vertex_index") && p.countType != PlyType::kNone && indicesProp < 0)
      indicesProp = static_cast<int>(j);
    if (p.name == "face_indices" && p.countType == PlyType::kNone) faceIndexProp = static_cast<int>(j);
  }
  if (indicesProp < 0)
    throw PlyError(name + ":" + std::to_string(e.line) +
                   ": no vertex_indices (or vertex_index) list in the face element");
  mesh.indices.reserve(3 * e.count);
  if (faceIndexProp >= 0) mesh.faceIndices.reserve(e.count);
  for (size_t f = 0; f < e.count; ++f) {
    c.At(e, f);
    int32_t v[4] = {0, 0, 0, 0};
    size_t n = 0;
    int32_t faceIndex = 0;
    for (size_t j = 0; j < e.props.size(); ++j) {
      const Property& p = e.props[j];
      if (static_cast<int>(j) == faceIndexProp) {
        faceIndex = static_cast<int32_t>(c.Value(p.type));
      } else if (static_cast<int>(j) == indicesProp) {
        n = ListCount(c, p.countType);
        for (size_t k = 0; k < n; ++k) {
          const double idx = c.Value(p.type);
          if (idx < 0 || idx >= static_cast<double>(vertexCount))
            c.Fail("face " + std::to_string(f) + ": vertex index " + std::to_string(static_cast<long long>(idx)) +
                   " is out of range (the file has " + std::to_string(vertexCount) + " vertices)");
          if (k < 4) v[k] = static_cast<int32_t>(idx);
        }
      } else {
        SkipProperty(c, p);
      }
    }
    if (n != 3 && n != 4) {
      ++mesh.skippedFaces;
      continue;
    }
    mesh.indices.insert(mesh.indices.end(), {v[0], v[1], v[2]});
    if (n == 4) mesh.indices.insert(mesh.indices.end(), {v[0], v[2], v[3]});
    if (faceIndexProp >= 0) mesh.faceIndices.insert(mesh.faceIndices.end(), n == 4 ? size_t(2) : size_t(1), faceIndex);
  }
}

}  // namespace

PlyMesh ParsePly(const std::string& bytes, const std::string& name) {
  const Header h = ParseHeader(bytes, name);
  const Element* vertices = nullptr;
  const Element* faces = nullptr;
  for (const Element& e : h.elements) {
    if (e.name == "vertex" && !vertices) vertices = &e;
    if (e.name == "face" && !faces) faces = &e;
  }
  if (!vertices || !faces) throw PlyError(name + ": no vertex or no face element: not a mesh");
  if (vertices->count > static_cast<size_t>(INT32_MAX))
    throw PlyError(name + ":" + std::to_string(vertices->line) + ": more vertices than 32-bit indices can address");
  PlyMesh mesh;
  Cursor c(bytes, h, name);
  // Elements in file order: PLY allows the faces before the vertices, and other elements (edges, materials) in
  // between, which are read and dropped.
  for (const Element& e : h.elements) {
    if (&e == vertices) {
      ReadVertices(c, e, name, mesh);
    } else if (&e == faces) {
      ReadFaces(c, e, name, vertices->count, mesh);
    } else {
      for (size_t i = 0; i < e.count; ++i) {
        c.At(e, i);
        for (const Property& p : e.props) SkipProperty(c, p);
      }
    }
  }
  return mesh;
}

PlyMesh ReadPly(const std::string& path) {
  std::string bytes;
  try {
    bytes = ReadFileBytes(path);
  } catch (const std::runtime_error& e) {
    throw PlyError(e.what());
  }
  return ParsePly(bytes, path);
}

}  // namespace tracer

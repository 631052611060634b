// @file pbrt_params.cpp: parameter lists (pbrt.org/fileformat-v4, "Parameter lists"; src/pbrt/parser.cpp's
// parseParameters and src/pbrt/paramdict.cpp's checks).
#include "pbrt_params.h"

#include <climits>
#include <cstring>

namespace tracer {

namespace {

struct TypeName {
  const char* name;
  PbrtParamType type;
};

// pbrt-v4's names first, then the older spellings it still meets in converted scenes.
const TypeName kTypeNames[] = {
    {"integer", PbrtParamType::kInteger},     {"float", PbrtParamType::kFloat},
    {"point2", PbrtParamType::kPoint2},       {"vector2", PbrtParamType::kVector2},
    {"point3", PbrtParamType::kPoint3},       {"vector3", PbrtParamType::kVector3},
    {"normal3", PbrtParamType::kNormal3},     {"normal", PbrtParamType::kNormal3},
    {"spectrum", PbrtParamType::kSpectrum},   {"rgb", PbrtParamType::kRgb},
    {"blackbody", PbrtParamType::kBlackbody}, {"bool", PbrtParamType::kBool},
    {"string", PbrtParamType::kString},       {"texture", PbrtParamType::kTexture},
    {"point", PbrtParamType::kPoint3},        {"vector", PbrtParamType::kVector3},
    {"color", PbrtParamType::kRgb},
};

// "type name" with any spaces or tabs around and between the two words.
void SplitDeclaration(const std::string& decl, std::string* type, std::string* name, std::string* rest) {
  size_t i = 0;
  auto word = [&](std::string* out) {
    while (i < decl.size() && (decl[i] == ' ' || decl[i] == '\t')) ++i;
    const size_t begin = i;
    while (i < decl.size() && decl[i] != ' ' && decl[i] != '\t') ++i;
    out->assign(decl, begin, i - begin);
  };
  word(type);
  word(name);
  word(rest);
}

[[noreturn]] void Bad(PbrtTokenizer& tok, const PbrtToken& at, const PbrtParam& p, const std::string& what) {
  throw PbrtError(tok.Loc(at), "\"" + std::string(PbrtParamTypeName(p.type)) + " " + p.name + "\": " + what);
}

void AddValue(PbrtTokenizer& tok, const PbrtToken& t, PbrtParam& p) {
  const bool number = t.kind == PbrtTokenKind::kNumber, string = t.kind == PbrtTokenKind::kString;
  switch (p.type) {
    case PbrtParamType::kInteger:
      if (!t.IsInteger()) Bad(tok, t, p, "expected an integer, found " + DescribeToken(t));
      if (t.number < INT_MIN || t.number > INT_MAX) Bad(tok, t, p, t.text + " does not fit in 32 bits");
      p.ints.push_back(static_cast<int32_t>(t.number));
      return;
    case PbrtParamType::kBool:
      // A quoted "true" is how pbrt-v3 wrote bools; pbrt-v4 upgrades such files, so it is read as the bool.
      if (t.kind == PbrtTokenKind::kBool || (string && (t.text == "true" || t.text == "false"))) {
        p.bools.push_back(t.text == "true");
        return;
      }
      Bad(tok, t, p, "expected true or false, found " + DescribeToken(t));
    case PbrtParamType::kString:
    case PbrtParamType::kTexture:
      if (!string) Bad(tok, t, p, "expected a quoted string, found " + DescribeToken(t));
      p.strings.push_back(t.text);
      return;
    case PbrtParamType::kSpectrum:
      if (string ? !p.floats.empty() : !p.strings.empty() || !number)
        Bad(tok, t, p, "expected (wavelength, value) numbers or one name, found " + DescribeToken(t));
      if (string)
        p.strings.push_back(t.text);
      else
        p.floats.push_back(t.number);
      return;
    default:
      if (!number) Bad(tok, t, p, "expected a number, found " + DescribeToken(t));
      p.floats.push_back(t.number);
      return;
  }
}

// The number of values each type takes per item; a list must hold whole items.
size_t ValuesPerItem(PbrtParamType type) {
  switch (type) {
    case PbrtParamType::kPoint2:
    case PbrtParamType::kVector2:
      return 2;
    case PbrtParamType::kPoint3:
    case PbrtParamType::kVector3:
    case PbrtParamType::kNormal3:
    case PbrtParamType::kRgb:
      return 3;
    default:
      return 1;
  }
}

void CheckCount(PbrtTokenizer& tok, const PbrtToken& decl, const PbrtParam& p) {
  const size_t values = p.ints.size() + p.floats.size() + p.strings.size() + p.bools.size();
  if (values == 0) Bad(tok, decl, p, "no values");
  const size_t per = ValuesPerItem(p.type);
  if (values % per != 0)
    Bad(tok, decl, p,
        std::to_string(values) + " values, not a multiple of the " + std::to_string(per) + " of a " +
            PbrtParamTypeName(p.type));
  if (p.type == PbrtParamType::kTexture && values != 1) Bad(tok, decl, p, "a texture parameter names one texture");
  if (p.type == PbrtParamType::kSpectrum && !p.strings.empty() && values != 1)
    Bad(tok, decl, p, "a spectrum names one spectrum or file");
  if (p.type == PbrtParamType::kSpectrum && p.strings.empty()) {
    if (values % 2 != 0) Bad(tok, decl, p, "a spectrum's numbers come in (wavelength, value) pairs");
    for (size_t i = 2; i < p.floats.size(); i += 2)
      if (!(p.floats[i] > p.floats[i - 2])) Bad(tok, decl, p, "the wavelengths do not increase");
  }
  if (p.type == PbrtParamType::kRgb)
    for (double v : p.floats)
      if (v < 0.0) Bad(tok, decl, p, "an rgb value is negative");  // pbrt-v4 refuses these too
}

PbrtParam ReadParam(PbrtTokenizer& tok, const PbrtToken& decl, PbrtBuilder& builder) {
  PbrtParam p;
  p.loc = tok.Loc(decl);
  std::string type, rest;
  SplitDeclaration(decl.text, &type, &p.name, &rest);
  if (type.empty() || p.name.empty() || !rest.empty())
    throw PbrtError(p.loc, "\"" + decl.text + "\" is not a parameter declaration \"type name\"");
  const TypeName* found = nullptr;
  for (const TypeName& t : kTypeNames)
    if (type == t.name) found = &t;
  if (!found) throw PbrtError(p.loc, "\"" + decl.text + "\": unknown parameter type \"" + type + "\"");
  p.type = found->type;
  if (type == "color") builder.WarnOnce("color", p.loc, "the parameter type \"color\" is pbrt-v3's; read as rgb");
  PbrtToken first = tok.Next();
  if (first.kind == PbrtTokenKind::kOpen) {
    for (;;) {
      PbrtToken t = tok.Next();
      if (t.kind == PbrtTokenKind::kClose) break;
      if (t.kind == PbrtTokenKind::kEnd || t.kind == PbrtTokenKind::kOpen || t.kind == PbrtTokenKind::kWord)
        Bad(tok, t, p, "the '[' at line " + std::to_string(first.line) + " is not closed before " + DescribeToken(t));
      AddValue(tok, t, p);
    }
  } else if (first.kind == PbrtTokenKind::kNumber || first.kind == PbrtTokenKind::kString ||
             first.kind == PbrtTokenKind::kBool) {
    AddValue(tok, first, p);
  } else {
    Bad(tok, first, p, "expected a value or '[', found " + DescribeToken(first));
  }
  CheckCount(tok, decl, p);
  return p;
}

}  // namespace

PbrtParams ReadPbrtParams(PbrtTokenizer& tok, PbrtBuilder& builder) {
  PbrtParams params;
  while (tok.Peek().kind == PbrtTokenKind::kString) {
    PbrtToken decl = tok.Next();
    params.list.push_back(ReadParam(tok, decl, builder));
  }
  return params;
}

}  // namespace tracer

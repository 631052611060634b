// @file pbrt_params.h: reading a parameter list, `"type name" value` or `"type name" [ values ]` repeated, with the
// checks pbrt-v4 makes of types and value counts (src/pbrt/paramdict.cpp). Private to the parser.
#pragma once
#include "pbrt_builder.h"
#include "tracer/host/pbrt_scene.h"
#include "tracer/host/pbrt_tokenizer.h"

namespace tracer {

// Reads parameters while the next token is a quoted string. Throws PbrtError naming the file and line of a bad
// declaration, an unknown type, a value of the wrong kind, or a count of values that the type does not allow.
PbrtParams ReadPbrtParams(PbrtTokenizer& tok, PbrtBuilder& builder);

}  // namespace tracer

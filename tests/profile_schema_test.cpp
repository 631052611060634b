// @file profile_schema_test.cpp: the JSON writer round-trips through a parser, and the report schema checks
// accept a conforming document and reject broken ones (so the GPU test that applies them can fail).
#include <gtest/gtest.h>

#include <cmath>

#include "report_schema.h"
#include "tracer/host/json_writer.h"

using namespace tracer;
using namespace tracer::test;

TEST(JsonWriter, RoundTripsThroughAParser) {
  JsonWriter w;
  w.BeginObject();
  w.Field("name", "quote \" backslash \\ newline \n tab \t");
  w.Field("pi", 3.25);
  w.Field("nan", std::nan(""));
  w.Field("big", 18446744073709551615ull);
  w.Field("flag", true);
  w.BeginArray("list");
  w.Field(nullptr, 1);
  w.Field(nullptr, 2);
  w.EndArray();
  w.BeginObject("inner");
  w.EndObject();
  w.EndObject();
  Json j = JsonParser::Parse(w.Str());
  EXPECT_EQ(j["name"].str, "quote \" backslash \\ newline \n tab \t");
  EXPECT_EQ(j["pi"].number, 3.25);
  EXPECT_EQ(j["nan"].type, Json::kNull);
  EXPECT_EQ(j["big"].number, 18446744073709551615.0);
  EXPECT_TRUE(j["flag"].boolean);
  ASSERT_EQ(j["list"].array.size(), 2u);
  EXPECT_EQ(j["list"].array[1].number, 2.0);
  EXPECT_EQ(j["inner"].type, Json::kObject);
  EXPECT_THROW(JsonParser::Parse("{\"a\": }"), std::runtime_error);
  EXPECT_THROW(JsonParser::Parse("[1, 2"), std::runtime_error);
}

namespace {
// A small profile document written with the program's own writer, field by field as RunProfile writes it.
std::string SampleProfile(bool withEvidence, bool withGpu) {
  JsonWriter j;
  j.BeginObject();
  if (withGpu) {
    j.BeginObject("gpu");
    j.Field("name", "GPU");
    j.Field("sm_count", 1);
    j.Field("compute_capability", "9.0");
    j.Field("driver_version", 13000);
    j.Field("runtime_version", 13000);
    j.Field("max_sm_clock_mhz", 1.0);
    j.Field("memory_clock_mhz", 1.0);
    j.Field("memory_gib", 1.0);
    j.EndObject();
  }
  j.Field("git_commit", "abc");
  j.Field("scene", "s.obj");
  for (const char* k : {"width", "height", "spp", "max_depth", "repeats"}) j.Field(k, 1);
  j.BeginArray("optimizations");
  for (int i = 0; i < 6; ++i) {
    j.BeginObject();
    j.Field("name", "opt");
    j.Field("stage", "render");
    j.Field("naive_ms", 2.0);
    j.Field("optimized_ms", 1.0);
    j.Field("speedup", 2.0);
    j.Field("evidence", withEvidence ? "because" : "");
    j.EndObject();
  }
  j.EndArray();
  j.BeginArray("measurements");
  j.EndArray();
  j.BeginArray("live_paths_per_bounce_one_generation");
  j.EndArray();
  j.EndObject();
  return j.Str();
}
}  // namespace

TEST(ReportSchema, AcceptsConformingAndRejectsBrokenProfiles) {
  EXPECT_EQ(CheckProfile(JsonParser::Parse(SampleProfile(true, true))), "");
  EXPECT_NE(CheckProfile(JsonParser::Parse(SampleProfile(false, true))), "");
  EXPECT_NE(CheckProfile(JsonParser::Parse(SampleProfile(true, false))), "");
  EXPECT_NE(CheckBenchmark(JsonParser::Parse(SampleProfile(true, true))), "");
}

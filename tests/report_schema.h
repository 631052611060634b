// @file report_schema.h: the schemas of output/profile.json and bench-<scene>.json (documented in docs/FORMATS.md),
// as checks that return the first problem found, or "" when the document conforms.
#pragma once
#include <string>
#include <vector>

#include "json_mini.h"

namespace tracer::test {

inline std::string RequireFields(const Json& j, const std::string& where,
                                 const std::vector<std::pair<const char*, Json::Type>>& fields) {
  if (j.type != Json::kObject) return where + " is not an object";
  for (auto& f : fields) {
    if (!j.Has(f.first)) return where + "." + f.first + " is missing";
    const Json& v = j[f.first];
    // Numbers may be null when not finite (JsonWriter writes NaN/inf as null).
    if (v.type != f.second && !(f.second == Json::kNumber && v.type == Json::kNull))
      return where + "." + f.first + " has the wrong type";
  }
  return "";
}

inline std::string CheckGpu(const Json& j) {
  return RequireFields(j["gpu"], "gpu",
                       {{"name", Json::kString},
                        {"sm_count", Json::kNumber},
                        {"compute_capability", Json::kString},
                        {"driver_version", Json::kNumber},
                        {"runtime_version", Json::kNumber},
                        {"max_sm_clock_mhz", Json::kNumber},
                        {"memory_clock_mhz", Json::kNumber},
                        {"memory_gib", Json::kNumber}});
}

inline std::string CheckMeasurement(const Json& m, const std::string& where) {
  std::string e = RequireFields(m, where,
                                {{"label", Json::kString},
                                 {"render_ms", Json::kNumber},
                                 {"samples_per_s", Json::kNumber},
                                 {"spp", Json::kNumber},
                                 {"extension_rays", Json::kNumber},
                                 {"shadow_rays", Json::kNumber},
                                 {"active_lanes_per_shade_warp", Json::kNumber},
                                 {"classes_per_shade_warp", Json::kNumber},
                                 {"peak_device_bytes", Json::kNumber},
                                 {"pool_paths", Json::kNumber},
                                 {"kernel_ms", Json::kObject},
                                 {"live_per_bounce", Json::kArray}});
  if (!e.empty()) return e;
  if (!m["kernel_ms"].Has("intersect")) return where + ".kernel_ms has no intersect stage";
  if (!(m["render_ms"].number > 0)) return where + ".render_ms is not positive";
  return "";
}

inline std::string CheckProfile(const Json& j) {
  std::string e = RequireFields(j, "profile",
                                {{"gpu", Json::kObject},
                                 {"git_commit", Json::kString},
                                 {"scene", Json::kString},
                                 {"width", Json::kNumber},
                                 {"height", Json::kNumber},
                                 {"spp", Json::kNumber},
                                 {"max_depth", Json::kNumber},
                                 {"repeats", Json::kNumber},
                                 {"optimizations", Json::kArray},
                                 {"measurements", Json::kArray},
                                 {"live_paths_per_bounce_one_generation", Json::kArray}});
  if (!e.empty()) return e;
  if (!(e = CheckGpu(j)).empty()) return e;
  if (j["optimizations"].array.size() < 6) return "profile.optimizations has fewer than 6 rows";
  for (const Json& r : j["optimizations"].array) {
    e = RequireFields(r, "optimization",
                      {{"name", Json::kString},
                       {"stage", Json::kString},
                       {"naive_ms", Json::kNumber},
                       {"optimized_ms", Json::kNumber},
                       {"speedup", Json::kNumber},
                       {"evidence", Json::kString}});
    if (!e.empty()) return e;
    if (r["evidence"].str.empty()) return "optimization " + r["name"].str + " has no evidence";
  }
  for (const Json& m : j["measurements"].array)
    if (!(e = CheckMeasurement(m, "measurement")).empty()) return e;
  return "";
}

inline std::string CheckBenchmark(const Json& j) {
  std::string e = RequireFields(j, "benchmark",
                                {{"gpu", Json::kObject},
                                 {"git_commit", Json::kString},
                                 {"scene", Json::kString},
                                 {"triangles", Json::kNumber},
                                 {"emitters", Json::kNumber},
                                 {"width", Json::kNumber},
                                 {"height", Json::kNumber},
                                 {"spp", Json::kNumber},
                                 {"max_depth", Json::kNumber},
                                 {"samples_per_s", Json::kNumber},
                                 {"extension_rays_per_s", Json::kNumber},
                                 {"shadow_rays_per_s", Json::kNumber},
                                 {"primary_rays_per_s", Json::kNumber},
                                 {"diffuse_rays_per_s", Json::kNumber},
                                 {"peak_device_bytes", Json::kNumber},
                                 {"naive_ratios", Json::kObject},
                                 {"measurements", Json::kArray}});
  if (!e.empty()) return e;
  if (!(e = CheckGpu(j)).empty()) return e;
  e = RequireFields(
      j["naive_ratios"], "naive_ratios",
      {{"naive_layout", Json::kNumber}, {"naive_compaction", Json::kNumber}, {"no_compaction", Json::kNumber}});
  if (!e.empty()) return e;
  if (j["emitters"].number > 0) {
    if (!j.Has("light_sampling")) return "benchmark.light_sampling is missing for a scene with emitters";
    e = RequireFields(j["light_sampling"], "light_sampling",
                      {{"rmse_power", Json::kNumber},
                       {"rmse_tiles", Json::kNumber},
                       {"rmse_ratio_equal_spp", Json::kNumber},
                       {"rmse_ratio_equal_time", Json::kNumber},
                       {"ms_power", Json::kNumber},
                       {"ms_tiles", Json::kNumber}});
    if (!e.empty()) return e;
  }
  for (const Json& m : j["measurements"].array)
    if (!(e = CheckMeasurement(m, "measurement")).empty()) return e;
  return "";
}

}  // namespace tracer::test

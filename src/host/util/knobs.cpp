// @file knobs.cpp: the TRACER_* environment variables, read where knobs.h says.
#include "tracer/host/knobs.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tracer::knobs {
namespace {

const char* Get(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

}  // namespace

int PlocRadius(int fallback) {
  const char* v = Get("TRACER_PLOC_RADIUS");
  const int r = v ? std::atoi(v) : fallback;
  return r == 8 || r == 32 ? r : fallback;
}

int SweepBlocks(int fallback) {
  const char* v = Get("TRACER_SWEEP_BLOCKS");
  return v ? std::max(1, std::atoi(v)) : fallback;
}

Switch SahTop() {
  const char* v = Get("TRACER_SAH_TOP");
  if (v && std::strcmp(v, "1") == 0) return Switch::kOn;
  if (v && std::strcmp(v, "0") == 0) return Switch::kOff;
  return Switch::kAuto;
}

SplitTopKnob SplitTop() {
  const char* v = Get("TRACER_SPLIT_TOP");
  if (!v) return SplitTopKnob::kUnset;
  if (std::strcmp(v, "auto") == 0) return SplitTopKnob::kAuto;
  if (std::strcmp(v, "1") == 0) return SplitTopKnob::kForced;
  return std::strcmp(v, "0") == 0 ? SplitTopKnob::kOff : SplitTopKnob::kUnset;
}

int SplitTopMin(int fallback) {
  const char* v = Get("TRACER_SPLIT_TOP_MIN");
  const int n = v ? std::atoi(v) : 0;
  return n >= 2 ? n : fallback;
}

bool MortonCube() { return std::getenv("TRACER_MORTON_CUBE") != nullptr; }

double MpiWatchdogSeconds() {
  const char* v = Get("TRACER_MPI_WATCHDOG_SECONDS");
  return v ? std::max(0.0, std::atof(v)) : 300.0;
}

int MpiSharedFilm() {
  const char* v = Get("TRACER_MPI_SHARED_FILM");
  return v ? std::max(1, std::atoi(v)) : 0;
}

bool MpiDeviceSceneOff() {
  const char* v = std::getenv("TRACER_MPI_DEVICE_SCENE");
  return v && std::strcmp(v, "0") == 0;
}

std::string FaultInject() {
  const char* v = std::getenv("TRACER_FAULT_INJECT");
  return v ? v : "";
}

}  // namespace tracer::knobs

// @file checkpoint_checks.h: the check that robustness_test.cpp and checkpoint_halves_test.cpp share for damaged
// checkpoint files: each one is refused with a CheckpointError that names the file and says what is wrong.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "test_util.h"
#include "tracer/host/checkpoint.h"

namespace tracer::test {

// A file's bytes and a part of the message LoadCheckpoint must refuse it with.
using CheckpointCase = std::pair<std::string, std::string>;

// Writes case i to dir/badI.ckpt and expects LoadCheckpoint to throw a CheckpointError whose message starts with
// that path and contains the case's message.
inline void ExpectEachCheckpointRefused(const std::string& dir, const std::vector<CheckpointCase>& cases) {
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = dir + "/bad" + std::to_string(i) + ".ckpt";
    WriteFile(path, cases[i].first);
    try {
      LoadCheckpoint(path);
      ADD_FAILURE() << "case " << i << " (" << cases[i].second << ") loaded";
    } catch (const CheckpointError& e) {
      const std::string what = e.what();
      EXPECT_TRUE(what.rfind(path + ": ", 0) == 0 && what.find(cases[i].second) != std::string::npos)
          << "case " << i << ": expected '" << cases[i].second << "' in: " << what;
    }
  }
}

}  // namespace tracer::test

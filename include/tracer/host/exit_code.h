// @file exit_code.h: the value that says "go on" where a step returns either that or the process's exit code.
#pragma once

namespace tracer {

// What a step that may end the process returns when it did not: any other value is the exit code to end with.
constexpr int kContinue = -1;

}  // namespace tracer

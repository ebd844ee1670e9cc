// One profiled region of a benchmark as a Chrome trace (LibTorch's Kineto profiler): CPU ops and,
// on CUDA, every kernel with its duration. tools/bench/trace_summary.py turns the file into a
// table.
#pragma once

#include <string>

namespace vime::bench {

void start_kineto_trace(bool cuda);
// Stops the profiler started by start_kineto_trace and writes the trace to `path`; false (with a
// line on stderr) where the LibTorch has no Kineto.
bool save_kineto_trace(const std::string& path);

}  // namespace vime::bench

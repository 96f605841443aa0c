#pragma once
// Reading ONNX Runtime's profiler output (COSTS_FORMAT.md §2): the JSON array
// of trace events that SessionOptions.enable_profiling writes.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace memplan::ir {

struct OrtProfile {
  // Node name -> mean kernel time in seconds. A node seen in N >= 2 runs is
  // averaged over runs 2..N: the first run pays one-off costs (allocation,
  // algorithm search) that a training loop does not.
  std::map<std::string, double> node_seconds;
  // Node name -> total bytes of its outputs (args.output_size), where given;
  // the largest value seen when runs differ.
  std::map<std::string, std::uint64_t> output_bytes;
  std::size_t kernel_events = 0;  // `_kernel_time` events read, all runs
};

// Reads the node events (`"cat": "Node"`, name `<node>_kernel_time`, `dur` in
// microseconds); session, fence and other events are skipped. A file that is
// missing, not a JSON array of objects, or has a kernel event without a
// non-negative finite `dur` throws InputError naming the file and the event.
OrtProfile read_ort_profile(const std::string& path);

}  // namespace memplan::ir

// memplan-synth: writes a synthetic training graph (bench/synthetic_graph.h)
// as an .onnx file, and optionally a memplan.costs file with its node times,
// so whole `memplan` runs can be timed on graphs of any size.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "bench/synthetic_graph.h"
#include "ir/device_presets.h"
#include "ir/onnx_loader.h"
#include "util/errors.h"

namespace {

// Every file is written to a temporary name and renamed at the end, so a
// reader never sees half a file.
void write_file(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Writes a synthetic transformer training graph (forward + mirrored backward) as ONNX"};
  memplan::bench::SyntheticOptions o;
  std::string out, costs, device = "a100-40gb";
  std::vector<std::string> dims{"batch=8", "seq=512"};
  app.add_option("--nodes", o.target_nodes, "About this many nodes (whole layers)")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Layout and time jitter seed")->capture_default_str();
  app.add_option("--hidden", o.hidden, "Hidden size")->capture_default_str();
  app.add_option("--heads", o.heads, "Attention heads")->capture_default_str();
  app.add_option("--vocab", o.vocab, "Output classes of the head")->capture_default_str();
  app.add_option("--dropout-share", o.dropout_share, "Share of layers with attention dropout")
      ->capture_default_str();
  app.add_option("-o,--output", out, "The .onnx file to write")->required();
  app.add_option(
      "--costs", costs,
      "Also write a memplan.costs file: the device's roofline times, jittered by the seed");
  app.add_option("--device", device, "Device preset for --costs")->capture_default_str();
  app.add_option("--dim", dims, "Dims bound to compute --costs (name=value)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    memplan::bench::SyntheticModel m = memplan::bench::make_synthetic_model(o);
    std::string bytes;
    if (!m.proto.SerializeToString(&bytes)) throw std::runtime_error("cannot serialise the model");
    write_file(out, bytes);
    std::fprintf(stderr, "memplan-synth: %s: %zu nodes, %zu layers, %zu bytes\n", out.c_str(),
                 m.nodes, m.layers, bytes.size());
    if (!costs.empty()) {
      memplan::ir::LoadOptions lo;
      for (const auto& d : dims) {
        auto eq = d.find('=');
        if (eq == std::string::npos)
          throw std::runtime_error("--dim " + d + ": expected name=value");
        lo.dims[d.substr(0, eq)] = std::stoll(d.substr(eq + 1));
      }
      std::vector<std::string> warnings;
      memplan::ir::Graph g = memplan::ir::build_graph(m.proto, lo, out, warnings);
      const auto& spec = memplan::ir::device_preset(device);
      write_file(costs, memplan::bench::synthetic_costs_json(
                            spec, memplan::bench::synthetic_node_seconds(g, spec, o.seed)));
      std::fprintf(stderr, "memplan-synth: %s: times of %zu nodes on %s\n", costs.c_str(),
                   g.nodes().size(), spec.name.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memplan-synth: %s\n", e.what());
    return 2;
  }
  return 0;
}

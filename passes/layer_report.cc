#include "passes/layer_report.h"

#include <cctype>
#include <unordered_map>

#include "ir/anchor_doc.h"
#include "passes/rewrite_model.h"
#include "passes/swap_functions.h"

namespace memplan::passes {
namespace {

// What `value` is read from, through any anchors' Reshapes.
const std::string& host_read(const std::string& value,
                             const std::unordered_map<std::string, std::string>& anchored_from) {
  const std::string* at = &value;
  for (auto it = anchored_from.find(*at); it != anchored_from.end(); it = anchored_from.find(*at))
    at = &it->second;
  return *at;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
  return true;
}

// The name a node is reported under: a recompute clone's original node.
std::string original_name(const onnx::NodeProto& node) {
  const std::string& doc = node.doc_string();
  if (doc.compare(0, kRecomputeDoc.size(), kRecomputeDoc) == 0)
    return doc.substr(kRecomputeDoc.size());
  return node.name();
}

}  // namespace

std::string layer_of(std::string_view name) {
  if (name.size() < 2 || name[0] != '/') return "(unscoped)";
  std::string_view first =
      name.substr(1, name.find('/', 1) == std::string_view::npos ? std::string_view::npos
                                                                 : name.find('/', 1) - 1);
  // Cut after the first dotted part that is a number: the layer index.
  std::size_t start = 0;
  while (start <= first.size()) {
    std::size_t dot = first.find('.', start);
    std::size_t end = dot == std::string_view::npos ? first.size() : dot;
    if (all_digits(first.substr(start, end - start)))
      return "/" + std::string(first.substr(0, end));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return "/" + std::string(first);
}

std::vector<LayerReport> layer_report(const onnx::ModelProto& model) {
  const auto& nodes = model.graph().node();
  std::unordered_map<std::string, std::string> maker;  // value -> node name (original for clones)
  for (const auto& n : nodes)
    for (const auto& o : n.output())
      if (!o.empty()) maker.emplace(o, original_name(n));

  std::vector<LayerReport> layers;
  std::unordered_map<std::string, std::size_t> layer_at;
  // Layers are opened in node order, so their order is the model's.
  auto layer = [&](const std::string& name) -> LayerReport& {
    auto [it, fresh] = layer_at.emplace(name, layers.size());
    if (fresh) layers.push_back({name, {}, {}});
    return layers[it->second];
  };
  std::unordered_map<std::string, std::pair<std::size_t, std::size_t>>
      swap_of_host;  // host -> (layer, index)
  std::unordered_map<std::string, std::pair<std::size_t, std::size_t>>
      clone_of;  // node -> (layer, index)
  // An anchored SwapIn reads its host copy through the anchor's Reshape.
  std::unordered_map<std::string, std::string> anchored_from;
  for (const auto& n : nodes)
    if (n.doc_string().rfind(ir::kAnchorDoc, 0) == 0 && n.input_size() > 0 && n.output_size() > 0)
      anchored_from[n.output(0)] = n.input(0);
  for (const auto& n : nodes) {
    std::string name = original_name(n);
    layer(layer_of(name));
    if (is_swap_node(n, kSwapOutOp) && n.input_size() == 1 && n.output_size() == 1) {
      auto it = maker.find(n.input(0));
      std::string where = it == maker.end() ? "(inputs)" : layer_of(it->second);
      LayerReport& l = layer(where);
      swap_of_host[n.output(0)] = {layer_at[where], l.swaps.size()};
      l.swaps.push_back({n.input(0), 0});
    } else if (is_swap_node(n, kSwapInOp) && n.input_size() == 1) {
      auto it = swap_of_host.find(host_read(n.input(0), anchored_from));
      if (it != swap_of_host.end()) ++layers[it->second.first].swaps[it->second.second].reloads;
    } else if (name != n.name()) {
      auto [it, fresh] = clone_of.emplace(name, std::pair<std::size_t, std::size_t>{});
      if (fresh) {
        std::string where = layer_of(name);
        LayerReport& l = layer(where);
        it->second = {layer_at[where], l.recomputes.size()};
        l.recomputes.push_back({name, 0});
      }
      ++layers[it->second.first].recomputes[it->second.second].clones;
    }
  }
  std::vector<LayerReport> used;
  for (auto& l : layers)
    if (!l.swaps.empty() || !l.recomputes.empty()) used.push_back(std::move(l));
  return used;
}

}  // namespace memplan::passes

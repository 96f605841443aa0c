#include "ir/ort_profile.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "util/errors.h"
#include "util/json_reader.h"
#include "util/text_file.h"

namespace memplan::ir {
namespace {

using json = nlohmann::json;

constexpr std::string_view kKernelSuffix = "_kernel_time";
std::string describe(const json& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return v.is_number() ? text : std::string(v.type_name()) + " " + text;
}

// ORT writes the args values as strings ("output_size": "4096"); a number is
// accepted too.
std::uint64_t parse_size(const json& v, const std::string& where) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    std::uint64_t n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec == std::errc{} && end == s.data() + s.size() && !s.empty()) return n;
  }
  throw InputError(where + ": args.output_size: expected a non-negative integer, got " +
                   describe(v));
}

struct Run {
  double ts;          // start, to order runs when the file is not in time order
  std::size_t index;  // position in the file, to keep the order stable
  double seconds;
};

}  // namespace

OrtProfile read_ort_profile(const std::string& path) {
  std::string text = util::read_text_file(path);
  json doc = util::parse_json_text(path, text);
  if (!doc.is_array())
    throw InputError(path + ": expected a JSON array of profiler events, got " +
                     std::string(doc.type_name()));

  OrtProfile out;
  std::map<std::string, std::vector<Run>> runs;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const json& event = doc[i];
    std::string where = path + ": event " + std::to_string(i);
    if (!event.is_object())
      throw InputError(where + ": expected an object, got " + describe(event));
    auto cat = event.find("cat");
    auto name_it = event.find("name");
    if (cat == event.end() || !cat->is_string() || cat->get_ref<const std::string&>() != "Node")
      continue;
    if (name_it == event.end() || !name_it->is_string())
      throw InputError(where + ": name: expected a string in a Node event");
    std::string_view name = name_it->get_ref<const std::string&>();
    if (!name.ends_with(kKernelSuffix)) continue;  // fences and other markers
    std::string node(name.substr(0, name.size() - kKernelSuffix.size()));
    where += " (" + json(node).dump() + ")";

    auto dur = event.find("dur");
    if (dur == event.end()) throw InputError(where + ": dur: missing");
    if (!dur->is_number())
      throw InputError(where + ": dur: expected a number of microseconds, got " + describe(*dur));
    double us = dur->get<double>();
    if (us < 0) throw InputError(where + ": dur: negative value " + describe(*dur));
    double ts = static_cast<double>(i);
    if (auto t = event.find("ts"); t != event.end() && t->is_number()) ts = t->get<double>();
    runs[node].push_back(Run{.ts = ts, .index = i, .seconds = us * 1e-6});
    ++out.kernel_events;

    if (auto args = event.find("args"); args != event.end() && args->is_object()) {
      if (auto size = args->find("output_size"); size != args->end()) {
        std::uint64_t bytes = parse_size(*size, where);
        auto [it, fresh] = out.output_bytes.emplace(node, bytes);
        if (!fresh) it->second = std::max(it->second, bytes);
      }
    }
  }

  for (auto& [node, list] : runs) {
    std::ranges::sort(list, [](const Run& a, const Run& b) {
      return std::pair(a.ts, a.index) < std::pair(b.ts, b.index);
    });
    std::size_t first = list.size() >= 2 ? 1 : 0;
    double sum = 0;
    for (std::size_t k = first; k < list.size(); ++k) sum += list[k].seconds;
    out.node_seconds[node] = sum / static_cast<double>(list.size() - first);
  }
  return out;
}

}  // namespace memplan::ir

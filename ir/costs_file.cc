#include "ir/costs_file.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>
#include <vector>

#include "util/errors.h"
#include "util/json_reader.h"
#include "util/text_file.h"

namespace memplan::ir {
namespace {

using json = nlohmann::json;

constexpr std::string_view kFormat = "memplan.costs";
constexpr std::int64_t kVersion = 1;
// Byte counts must fit a signed 64-bit integer so later arithmetic in either
// signedness is safe.
constexpr std::uint64_t kMaxBytes = std::numeric_limits<std::int64_t>::max();
const std::vector<std::string> kUserNamedSections{"nodes", "tensors"};

// Where in the document a value sits, rendered the way error messages cite it:
// `nodes."MatMul_3".seconds` (names of nodes and tensors are quoted, since they
// may hold dots or spaces; the format's own keys are not).
class KeyPath {
 public:
  KeyPath() = default;
  KeyPath child(std::string key) const {
    KeyPath p = *this;
    p.keys_.push_back(std::move(key));
    return p;
  }
  std::string str() const { return util::render_key_path(keys_, kUserNamedSections); }

 private:
  std::vector<std::string> keys_;
};

// A short rendering of an offending value for messages; big objects are cut.
std::string describe(const json& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  if (v.is_number()) return text;
  return std::string(v.type_name()) + " " + text;
}

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  [[noreturn]] void fail(const KeyPath& at, const std::string& message) const {
    std::string where = at.str();
    throw InputError(path_ + ": " + (where.empty() ? "" : where + ": ") + message);
  }

  const json& object(const json& v, const KeyPath& at) const {
    if (!v.is_object()) fail(at, "expected an object, got " + describe(v));
    return v;
  }

  const json* member(const json& obj, std::string_view key) const {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }

  const json& required(const json& obj, std::string_view key, const KeyPath& at) const {
    const json* v = member(obj, key);
    if (v == nullptr) fail(at.child(std::string(key)), "missing");
    return *v;
  }

  double non_negative(const json& v, const KeyPath& at) const {
    if (!v.is_number()) fail(at, "expected a non-negative number, got " + describe(v));
    double x = v.get<double>();
    if (std::isnan(x) || std::isinf(x)) fail(at, "not a finite number: " + describe(v));
    if (x < 0) fail(at, "negative value " + describe(v));
    return x;
  }

  double positive(const json& v, const KeyPath& at) const {
    double x = non_negative(v, at);
    if (x == 0) fail(at, "must be positive, got " + describe(v));
    return x;
  }

  std::uint64_t byte_count(const json& v, const KeyPath& at) const {
    if (v.is_number_unsigned()) {
      auto n = v.get<std::uint64_t>();
      if (n > kMaxBytes) fail(at, "value " + describe(v) + " exceeds 2^63-1");
      return n;
    }
    if (v.is_number_integer()) fail(at, "negative value " + describe(v));
    double x = non_negative(v, at);
    if (x != std::floor(x)) fail(at, "expected a whole number of bytes, got " + describe(v));
    if (x >= 9223372036854775808.0) fail(at, "value " + describe(v) + " exceeds 2^63-1");
    return static_cast<std::uint64_t>(x);
  }

  void read_device(const json& device, const KeyPath& at, CostsFile& out) const {
    object(device, at);
    if (const json* v = member(device, "name")) {
      if (!v->is_string() || v->get_ref<const std::string&>().empty())
        fail(at.child("name"), "expected a non-empty string, got " + describe(*v));
      out.device_name = v->get<std::string>();
    }
    if (const json* v = member(device, "memory_bytes")) {
      out.memory_bytes = byte_count(*v, at.child("memory_bytes"));
      if (*out.memory_bytes == 0) fail(at.child("memory_bytes"), "must be positive, got 0");
    }
    if (const json* v = member(device, "h2d_bytes_per_s"))
      out.h2d_bytes_per_s = positive(*v, at.child("h2d_bytes_per_s"));
    if (const json* v = member(device, "d2h_bytes_per_s"))
      out.d2h_bytes_per_s = positive(*v, at.child("d2h_bytes_per_s"));
    if (const json* v = member(device, "peak_flops"))
      out.peak_flops = positive(*v, at.child("peak_flops"));
    if (const json* v = member(device, "memory_bytes_per_s"))
      out.memory_bytes_per_s = positive(*v, at.child("memory_bytes_per_s"));
    if (const json* v = member(device, "launch_seconds"))
      out.launch_seconds = non_negative(*v, at.child("launch_seconds"));
  }

  CostsFile read(const json& doc) const {
    KeyPath top;
    if (!doc.is_object())
      fail(top, "expected a JSON object at the top level, got " + describe(doc));

    const json& format = required(doc, "format", top);
    if (!format.is_string() || format.get_ref<const std::string&>() != kFormat)
      fail(top.child("format"),
           "expected \"" + std::string(kFormat) + "\", got " + describe(format));
    const json& version = required(doc, "version", top);
    if (!version.is_number_integer())
      fail(top.child("version"), "expected the integer 1, got " + describe(version));
    if (version.get<std::int64_t>() != kVersion)
      fail(top.child("version"),
           "unsupported version " + describe(version) + " (this build reads version 1)");

    CostsFile out;
    out.path = path_;
    if (const json* device = member(doc, "device")) read_device(*device, top.child("device"), out);

    KeyPath nodes_at = top.child("nodes");
    for (const auto& [name, entry] : object(required(doc, "nodes", top), nodes_at).items()) {
      KeyPath at = nodes_at.child(name);
      object(entry, at);
      out.node_seconds[name] = non_negative(required(entry, "seconds", at), at.child("seconds"));
    }

    if (const json* tensors = member(doc, "tensors")) {
      KeyPath tensors_at = top.child("tensors");
      for (const auto& [name, entry] : object(*tensors, tensors_at).items()) {
        KeyPath at = tensors_at.child(name);
        object(entry, at);
        out.tensor_bytes[name] = byte_count(required(entry, "bytes", at), at.child("bytes"));
      }
    }
    return out;
  }

 private:
  const std::string& path_;
};

}  // namespace

CostsFile read_costs_file(const std::string& path) {
  std::string text = util::read_text_file(path);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError(path + ": empty file (expected a memplan.costs JSON object)");
  return Reader(path).read(util::parse_json_text(
      path, text, {.max_depth = 64, .user_named_sections = kUserNamedSections}));
}

DeviceSpec apply_overrides(DeviceSpec base, const CostsFile& f) {
  std::string fields;
  auto take = [&fields](auto& into, const auto& given, std::string_view field) {
    if (!given) return;
    into = *given;
    fields += (fields.empty() ? "" : ", ") + std::string(field);
  };
  take(base.name, f.device_name, "name");
  take(base.memory_bytes, f.memory_bytes, "memory_bytes");
  take(base.h2d_bytes_per_s, f.h2d_bytes_per_s, "h2d_bytes_per_s");
  take(base.d2h_bytes_per_s, f.d2h_bytes_per_s, "d2h_bytes_per_s");
  take(base.peak_flops, f.peak_flops, "peak_flops");
  take(base.memory_bytes_per_s, f.memory_bytes_per_s, "memory_bytes_per_s");
  take(base.launch_seconds, f.launch_seconds, "launch_seconds");
  if (!fields.empty())
    base.source += (base.source.empty() ? "" : "; ") + fields + " from " + f.path;
  return base;
}

}  // namespace memplan::ir

#include "util/json_reader.h"

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <unordered_set>

#include "util/errors.h"

namespace memplan::util {
namespace {

using json = nlohmann::json;

bool plain(std::string_view key) {
  if (key.empty()) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '[' || c == ']';
  });
}

std::string strip_json_prefix(std::string_view what) {
  // "[json.exception.parse_error.101] parse error at ..." -> "parse error at ..."
  if (!what.empty() && what.front() == '[') {
    auto close = what.find("] ");
    if (close != std::string_view::npos) what.remove_prefix(close + 2);
  }
  return std::string(what);
}

// Builds the DOM through nlohmann's plain SAX DOM builder, tracking where it
// is. (nlohmann's parse-with-callback would also bound the depth, but its
// DOM builder rescans the enclosing container at every object end: reading a
// 100k-node costs file took minutes.)
class TrackingSax {
 public:
  TrackingSax(json& root, const std::string& path, const JsonReadOptions& options)
      : dom_(root), path_(path), options_(options) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return value() && dom_.number_float(v, s);
  }
  bool string(json::string_t& v) { return value() && dom_.string(v); }
  bool binary(json::binary_t& v) { return value() && dom_.binary(v); }

  bool start_object(std::size_t n) {
    value();
    open(false);
    return dom_.start_object(n);
  }
  bool key(json::string_t& k) {
    Frame& f = frames_.back();
    f.key = k;
    if (!f.keys.insert(k).second) fail(where() + ": key given twice");
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    value();
    open(true);
    return dom_.start_array(n);
  }
  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }

  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    // 406: a number a double cannot hold (5e406), where the lexer stopped.
    if (e.id == 406) fail(where() + ": number out of range (" + strip_json_prefix(e.what()) + ")");
    fail("not valid JSON: " + strip_json_prefix(e.what()));
    return false;
  }

 private:
  struct Frame {
    bool array = false;
    std::size_t index = 0;  // of the next element, in an array
    std::string key;        // being read, in an object
    std::unordered_set<std::string> keys;
  };

  [[noreturn]] void fail(const std::string& message) const {
    throw InputError(path_ + ": " + message);
  }

  std::string where() const {
    std::vector<std::string> keys;
    for (const Frame& f : frames_)
      keys.push_back(f.array ? "[" + std::to_string(f.index == 0 ? 0 : f.index - 1) + "]" : f.key);
    return keys.empty() ? std::string("top level")
                        : render_key_path(keys, options_.user_named_sections);
  }

  // A value begins: counts array elements so messages can cite `steps.[12]`.
  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return true;
  }

  void open(bool array) {
    if (static_cast<int>(frames_.size()) >= options_.max_depth)
      fail(where() + ": nested more than " + std::to_string(options_.max_depth) + " levels deep");
    frames_.push_back(Frame{array, 0, {}, {}});
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const std::string& path_;
  const JsonReadOptions& options_;
  std::vector<Frame> frames_;
};

}  // namespace

std::string render_key_path(std::span<const std::string> keys,
                            std::span<const std::string> user_named_sections) {
  std::string out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out += '.';
    bool user_name = i == 1 && std::find(user_named_sections.begin(), user_named_sections.end(),
                                         keys[0]) != user_named_sections.end();
    out += user_name || !plain(keys[i]) ? json(keys[i]).dump() : keys[i];
  }
  return out;
}

json parse_json_text(const std::string& path, const std::string& text,
                     const JsonReadOptions& options) {
  json root;
  TrackingSax sax(root, path, options);
  try {
    json::sax_parse(text, &sax);
  } catch (const json::exception& e) {
    // What the DOM builder itself refuses (sizes beyond max_size).
    throw InputError(path + ": not valid JSON: " + strip_json_prefix(e.what()));
  }
  return root;
}

}  // namespace memplan::util

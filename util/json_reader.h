#pragma once
// The one way memplan parses JSON inputs (costs, ORT profiles, plan.json):
// linear time, bounded nesting, and errors that say where.
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

namespace memplan::util {

struct JsonReadOptions {
  // nlohmann's DOM and dump recurse per level: 200k '[' overflowed the stack
  // (found by fuzzing). No memplan format nests more than a few levels.
  int max_depth = 64;
  // Keys whose members are user names (node or tensor names): those are
  // always quoted in messages, so `nodes."MatMul_3"` reads as a name.
  std::vector<std::string> user_named_sections;
};

// Parses `text` read from `path`. InputError naming the path, and where in
// the document, for invalid JSON, nesting deeper than max_depth, a number
// beyond a double's range (1e999), or a key given twice in one object
// (nlohmann alone would keep the last one silently).
nlohmann::json parse_json_text(const std::string& path, const std::string& text,
                               const JsonReadOptions& options = {});

// Renders a key path the way messages cite it: keys joined by dots, keys
// that are not plain identifiers (and user names) quoted.
std::string render_key_path(std::span<const std::string> keys,
                            std::span<const std::string> user_named_sections = {});

}  // namespace memplan::util

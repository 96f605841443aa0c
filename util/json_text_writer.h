#pragma once
// JSON text written as it is produced, byte for byte what nlohmann's
// dump(indent, ' ', false, handler) writes for the same document, without
// building the document: large outputs (plan.json, the Chrome trace) took
// more memory and time as a DOM than as text.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memplan::util {

// Objects are written in the order keys are given: to match a
// nlohmann::json (not ordered_json) document, give them sorted.
class JsonTextWriter {
 public:
  // indent < 0: compact. replace_bad_utf8: bad sequences become U+FFFD
  // (error_handler_t::replace); else they throw nlohmann's type_error, as
  // the default handler does.
  explicit JsonTextWriter(std::string& out, int indent = -1, bool replace_bad_utf8 = true)
      : out_(out), indent_(indent), replace_(replace_bad_utf8) {}

  JsonTextWriter& begin_object() { return open('{'); }
  JsonTextWriter& end_object() { return close('}'); }
  JsonTextWriter& begin_array() { return open('['); }
  JsonTextWriter& end_array() { return close(']'); }
  JsonTextWriter& key(std::string_view name);

  JsonTextWriter& value(std::string_view text);
  JsonTextWriter& value(const char* text) { return value(std::string_view(text)); }
  // As nlohmann: the shortest text that reads back the same double; null
  // for NaN and infinities.
  JsonTextWriter& value(double number);
  JsonTextWriter& value(std::nullptr_t);
  JsonTextWriter& value(bool flag);
  template <std::integral T>
  requires(!std::same_as<T, bool>) JsonTextWriter& value(T number) {
    separate();
    append_integer(static_cast<std::int64_t>(number), std::is_signed_v<T>,
                   static_cast<std::uint64_t>(number));
    return *this;
  }

  // key(name).value(v) in one call.
  template <class T>
  JsonTextWriter& member(std::string_view name, const T& v) {
    return key(name).value(v);
  }

 private:
  JsonTextWriter& open(char bracket);
  JsonTextWriter& close(char bracket);
  void separate();
  void newline();
  void append_integer(std::int64_t as_signed, bool is_signed, std::uint64_t as_unsigned);

  std::string& out_;
  const int indent_;
  const bool replace_;
  std::vector<bool> has_items_;  // per open container
  bool after_key_ = false;
};

}  // namespace memplan::util

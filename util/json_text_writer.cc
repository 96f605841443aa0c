#include "util/json_text_writer.h"

#include <array>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace memplan::util {
namespace {

// Text nlohmann copies through unchanged: printable ASCII, no quote or
// backslash. Anything else (escapes, UTF-8 to check) is left to nlohmann.
bool verbatim(std::string_view text) {
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') return false;
  }
  return true;
}

}  // namespace

void JsonTextWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (has_items_.empty()) return;
  if (has_items_.back()) out_ += ',';
  has_items_.back() = true;
  newline();
}

void JsonTextWriter::newline() {
  if (indent_ < 0) return;
  out_ += '\n';
  out_.append(has_items_.size() * static_cast<std::size_t>(indent_), ' ');
}

JsonTextWriter& JsonTextWriter::open(char bracket) {
  separate();
  out_ += bracket;
  has_items_.push_back(false);
  return *this;
}

JsonTextWriter& JsonTextWriter::close(char bracket) {
  // As nlohmann: an empty container stays on its line ("[]", "{}").
  const bool had_items = has_items_.back();
  has_items_.pop_back();
  if (had_items) newline();
  out_ += bracket;
  return *this;
}

JsonTextWriter& JsonTextWriter::key(std::string_view name) {
  value(name);
  out_ += indent_ < 0 ? ":" : ": ";
  after_key_ = true;
  return *this;
}

JsonTextWriter& JsonTextWriter::value(std::string_view text) {
  separate();
  if (verbatim(text)) {
    out_ += '"';
    out_ += text;
    out_ += '"';
  } else {
    using Handler = nlohmann::json::error_handler_t;
    out_ += nlohmann::json(std::string(text))
                .dump(-1, ' ', false, replace_ ? Handler::replace : Handler::strict);
  }
  return *this;
}

JsonTextWriter& JsonTextWriter::value(double number) {
  separate();
  if (!std::isfinite(number)) {
    out_ += "null";
    return *this;
  }
  // nlohmann's own Grisu2 conversion: its digits are not always those of
  // std::to_chars's shortest form.
  std::array<char, 64> buf{};
  char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), number);
  out_.append(buf.data(), end);
  return *this;
}

JsonTextWriter& JsonTextWriter::value(std::nullptr_t) {
  separate();
  out_ += "null";
  return *this;
}

JsonTextWriter& JsonTextWriter::value(bool flag) {
  separate();
  out_ += flag ? "true" : "false";
  return *this;
}

void JsonTextWriter::append_integer(std::int64_t as_signed, bool is_signed,
                                    std::uint64_t as_unsigned) {
  std::array<char, 24> buf{};
  const auto r = is_signed ? std::to_chars(buf.data(), buf.data() + buf.size(), as_signed)
                           : std::to_chars(buf.data(), buf.data() + buf.size(), as_unsigned);
  out_.append(buf.data(), r.ptr);
}

}  // namespace memplan::util

#include "solvers/solution_wire.h"

#include <cstdint>
#include <cstring>

namespace memplan::solvers {
namespace {

template <typename T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void put_bytes(std::string& out, std::string_view bytes) {
  put<std::uint64_t>(out, bytes.size());
  out.append(bytes);
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  template <typename T>
  bool get(T& value) {
    if (bytes_.size() < sizeof value) return false;
    std::memcpy(&value, bytes_.data(), sizeof value);
    bytes_.remove_prefix(sizeof value);
    return true;
  }

  bool get_bytes(std::string& out) {
    std::uint64_t n = 0;
    if (!get(n) || bytes_.size() < n) return false;
    out.assign(bytes_.substr(0, n));
    bytes_.remove_prefix(n);
    return true;
  }

  bool done() const { return bytes_.empty(); }

 private:
  std::string_view bytes_;
};

}  // namespace

std::string encode_solution(const WireSolution& w) {
  const Solution& s = w.solution;
  std::string out;
  put_bytes(out, std::string_view(reinterpret_cast<const char*>(s.choice.data()), s.choice.size()));
  put<std::uint8_t>(out, static_cast<std::uint8_t>(s.status));
  put<double>(out, s.objective_seconds);
  put<std::uint8_t>(out, s.bound_seconds ? 1 : 0);
  put<double>(out, s.bound_seconds.value_or(0));
  put<double>(out, s.solve_seconds);
  put_bytes(out, s.note);
  put<std::uint8_t>(out, w.interrupted ? 1 : 0);
  return out;
}

std::optional<WireSolution> decode_solution(std::string_view bytes) {
  Reader r(bytes);
  WireSolution w;
  Solution& s = w.solution;
  std::string choice;
  std::uint8_t status = 0, has_bound = 0, interrupted = 0;
  double bound = 0;
  if (!r.get_bytes(choice) || !r.get(status) || !r.get(s.objective_seconds) || !r.get(has_bound) ||
      !r.get(bound) || !r.get(s.solve_seconds) || !r.get_bytes(s.note) || !r.get(interrupted) ||
      !r.done())
    return std::nullopt;
  for (const char c : choice) {
    const auto d = static_cast<std::uint8_t>(c);
    if (d > static_cast<std::uint8_t>(Decision::kRecompute)) return std::nullopt;
    s.choice.push_back(static_cast<Decision>(d));
  }
  if (status > static_cast<std::uint8_t>(SolveStatus::kInfeasible)) return std::nullopt;
  s.status = static_cast<SolveStatus>(status);
  if (has_bound != 0) s.bound_seconds = bound;
  w.interrupted = interrupted != 0;
  return w;
}

}  // namespace memplan::solvers

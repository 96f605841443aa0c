#include "ir/small_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace memplan::ir {
namespace {

using onnx::TensorProto;

template <typename T>
std::optional<std::vector<T>> raw_values(const std::string& raw, std::size_t n) {
  if (raw.size() != n * sizeof(T)) return std::nullopt;
  std::vector<T> v(n);
  std::memcpy(v.data(), raw.data(), raw.size());
  return v;
}

// Integer-like data: int64_data for INT64 / UINT32 / UINT64, int32_data for
// the narrower types and BOOL; or raw little-endian bytes.
std::optional<std::vector<int64_t>> integer_values(const TensorProto& t, std::size_t n) {
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    switch (t.data_type()) {
      case TensorProto::INT64:
        return raw_values<int64_t>(raw, n);
      case TensorProto::INT32:
        if (auto v = raw_values<int32_t>(raw, n)) return std::vector<int64_t>(v->begin(), v->end());
        return std::nullopt;
      case TensorProto::BOOL:
      case TensorProto::UINT8:
        if (auto v = raw_values<uint8_t>(raw, n)) return std::vector<int64_t>(v->begin(), v->end());
        return std::nullopt;
      case TensorProto::INT8:
        if (auto v = raw_values<int8_t>(raw, n)) return std::vector<int64_t>(v->begin(), v->end());
        return std::nullopt;
      default:
        return std::nullopt;
    }
  }
  std::vector<int64_t> v;
  if (t.data_type() == TensorProto::INT64) {
    v.assign(t.int64_data().begin(), t.int64_data().end());
  } else {
    v.assign(t.int32_data().begin(), t.int32_data().end());
  }
  if (v.size() != n) return std::nullopt;
  return v;
}

std::optional<std::vector<double>> real_values(const TensorProto& t, std::size_t n) {
  if (t.has_raw_data()) {
    if (t.data_type() == TensorProto::FLOAT) {
      if (auto v = raw_values<float>(t.raw_data(), n))
        return std::vector<double>(v->begin(), v->end());
      return std::nullopt;
    }
    return raw_values<double>(t.raw_data(), n);
  }
  std::vector<double> v;
  if (t.data_type() == TensorProto::FLOAT) {
    v.assign(t.float_data().begin(), t.float_data().end());
  } else {
    v.assign(t.double_data().begin(), t.double_data().end());
  }
  if (v.size() != n) return std::nullopt;
  return v;
}

}  // namespace

bool is_floating(int32_t elem) { return elem == TensorProto::FLOAT || elem == TensorProto::DOUBLE; }

bool foldable_elem_type(int32_t elem) {
  switch (elem) {
    case TensorProto::INT64:
    case TensorProto::INT32:
    case TensorProto::INT8:
    case TensorProto::UINT8:
    case TensorProto::BOOL:
    case TensorProto::FLOAT:
    case TensorProto::DOUBLE:
      return true;
    default:
      return false;
  }
}

bool SmallTensor::floating() const { return is_floating(elem); }

std::size_t SmallTensor::size() const { return floating() ? reals.size() : ints.size(); }

double SmallTensor::real(std::size_t k) const {
  return floating() ? reals[k] : static_cast<double>(ints[k]);
}

int64_t SmallTensor::integer(std::size_t k) const {
  return floating() ? static_cast<int64_t>(reals[k]) : ints[k];
}

SmallTensor SmallTensor::zeros(int32_t elem, std::vector<int64_t> dims) {
  SmallTensor v;
  v.elem = elem;
  const auto n = static_cast<std::size_t>(element_count(dims));
  v.dims = std::move(dims);
  if (v.floating()) {
    v.reals.assign(n, 0.0);
  } else {
    v.ints.assign(n, 0);
  }
  return v;
}

void SmallTensor::set(std::size_t k, double v) {
  if (floating()) {
    reals[k] = elem == TensorProto::FLOAT ? static_cast<double>(static_cast<float>(v)) : v;
  } else if (elem == TensorProto::BOOL) {
    ints[k] = v != 0.0 ? 1 : 0;
  } else {
    ints[k] = saturating_int64(v);
  }
}

int64_t saturating_int64(double v) {
  constexpr double kLimit = 9.2e18;  // just inside int64's range
  if (std::isnan(v)) return 0;
  if (v >= kLimit) return std::numeric_limits<int64_t>::max();
  if (v <= -kLimit) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(std::trunc(v));
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

int64_t element_count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::optional<SmallTensor> small_tensor_from_proto(const TensorProto& t) {
  if (!foldable_elem_type(t.data_type()) || t.data_location() == TensorProto::EXTERNAL)
    return std::nullopt;
  SmallTensor v;
  v.elem = t.data_type();
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > static_cast<int64_t>(kMaxSmallTensorElements)) return std::nullopt;
    n *= d;
    if (n > static_cast<int64_t>(kMaxSmallTensorElements)) return std::nullopt;
    v.dims.push_back(d);
  }
  if (v.floating()) {
    auto r = real_values(t, static_cast<std::size_t>(n));
    if (!r) return std::nullopt;
    v.reals = std::move(*r);
  } else {
    auto i = integer_values(t, static_cast<std::size_t>(n));
    if (!i) return std::nullopt;
    v.ints = std::move(*i);
  }
  return v;
}

TensorProto small_tensor_to_proto(const SmallTensor& v, const std::string& name) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(v.elem);
  for (int64_t d : v.dims) t.add_dims(d);
  switch (v.elem) {
    case TensorProto::FLOAT:
      for (double x : v.reals) t.add_float_data(static_cast<float>(x));
      break;
    case TensorProto::DOUBLE:
      for (double x : v.reals) t.add_double_data(x);
      break;
    case TensorProto::INT64:
      for (int64_t x : v.ints) t.add_int64_data(x);
      break;
    default:
      for (int64_t x : v.ints) t.add_int32_data(static_cast<int32_t>(x));
      break;
  }
  return t;
}

}  // namespace memplan::ir

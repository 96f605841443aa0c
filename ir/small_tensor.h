#pragma once
// A small constant tensor held by value: what exported graphs compute shapes
// with (Shape -> Gather -> Concat -> Reshape), and what shape folding
// evaluates. Integers and booleans are kept exactly as int64, floating
// point as double.
#include <cstdint>
#include <optional>
#include <vector>

#include "onnx/onnx_pb.h"

namespace memplan::ir {

struct SmallTensor {
  int32_t elem = onnx::TensorProto::INT64;  // onnx::TensorProto::DataType
  std::vector<int64_t> dims;
  std::vector<int64_t> ints;  // integer and bool element types
  std::vector<double> reals;  // FLOAT and DOUBLE

  bool floating() const;
  std::size_t size() const;
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  // Element k as a double / as an int64 (truncated), whatever it is stored as.
  double real(std::size_t k) const;
  int64_t integer(std::size_t k) const;
  // A tensor of the same shape and element type `elem`, filled with zeros.
  static SmallTensor zeros(int32_t elem, std::vector<int64_t> dims);
  void set(std::size_t k, double v);
};

// The largest tensor folding creates or reads: shape computations are tiny,
// and folding large data would only copy it.
constexpr std::size_t kMaxSmallTensorElements = 4096;

// Element types folding can evaluate exactly.
bool foldable_elem_type(int32_t elem);
bool is_floating(int32_t elem);

// The tensor's value, or nullopt when it is too large, external, of another
// element type, or malformed.
std::optional<SmallTensor> small_tensor_from_proto(const onnx::TensorProto& t);
onnx::TensorProto small_tensor_to_proto(const SmallTensor& v, const std::string& name);

// v truncated toward zero, saturated to int64's range (0 for NaN): what a
// float-to-int cast gives without undefined behaviour on wild values.
int64_t saturating_int64(double v);

// Row-major strides of `dims`, and the element count they span.
std::vector<int64_t> strides_of(const std::vector<int64_t>& dims);
int64_t element_count(const std::vector<int64_t>& dims);

}  // namespace memplan::ir

#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace memplan::ir {

// Element size in bytes of an ONNX TensorProto::DataType, or nullopt for
// types without a fixed size (string, undefined). Sub-byte types (int4) are
// rounded up to one byte per element: memplan accounts whole bytes.
std::optional<std::uint64_t> element_size(std::int32_t onnx_elem_type);

// float32, float16, float64 or bfloat16: what a parameter, gradient or
// loss is stored as.
bool is_floating_point(std::int32_t onnx_elem_type);

// "float32", "int64", …; "type<N>" for codes this build does not know.
std::string_view dtype_name(std::int32_t onnx_elem_type);

}  // namespace memplan::ir

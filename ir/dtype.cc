#include "ir/dtype.h"

namespace memplan::ir {
namespace {
struct DTypeInfo {
  std::string_view name;
  std::uint64_t size;  // 0: no fixed size
};

// Indexed by TensorProto::DataType (onnx.proto); 17.. are the float8 and
// 4-bit types of newer ONNX versions, kept so newer models still size.
constexpr DTypeInfo kTypes[] = {
    {"undefined", 0},      {"float32", 4},      {"uint8", 1},          {"int8", 1},
    {"uint16", 2},         {"int16", 2},        {"int32", 4},          {"int64", 8},
    {"string", 0},         {"bool", 1},         {"float16", 2},        {"float64", 8},
    {"uint32", 4},         {"uint64", 8},       {"complex64", 8},      {"complex128", 16},
    {"bfloat16", 2},       {"float8e4m3fn", 1}, {"float8e4m3fnuz", 1}, {"float8e5m2", 1},
    {"float8e5m2fnuz", 1}, {"uint4", 1},        {"int4", 1},           {"float4e2m1", 1},
    {"float8e8m0", 1},     {"uint2", 1},        {"int2", 1},
};
constexpr std::int32_t kTypeCount = static_cast<std::int32_t>(sizeof(kTypes) / sizeof(kTypes[0]));
}  // namespace

std::optional<std::uint64_t> element_size(std::int32_t t) {
  if (t <= 0 || t >= kTypeCount || kTypes[t].size == 0) return std::nullopt;
  return kTypes[t].size;
}

std::string_view dtype_name(std::int32_t t) {
  if (t < 0 || t >= kTypeCount) return "unknown";
  return kTypes[t].name;
}

bool is_floating_point(std::int32_t onnx_elem_type) {
  return onnx_elem_type == 1 || onnx_elem_type == 10 || onnx_elem_type == 11 ||
         onnx_elem_type == 16;
}

}  // namespace memplan::ir

#pragma once
// Small ONNX models built in code, for tests that need exact arithmetic.
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "onnx/onnx_pb.h"

namespace memplan::test {

// A dim is a number or a symbolic name.
using Dim = std::variant<std::int64_t, std::string>;

class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 17);
  ModelBuilder& input(const std::string& name, std::vector<Dim> dims, int elem_type = 1);
  ModelBuilder& output(const std::string& name, std::vector<Dim> dims = {}, int elem_type = 1,
                       bool with_shape = false);
  // An initializer with dims only (no data), as stripped fixtures have.
  ModelBuilder& initializer(const std::string& name, std::vector<std::int64_t> dims,
                            int elem_type = 1);
  // An int64 initializer with data (shape constants, axes).
  ModelBuilder& int64_constant(const std::string& name, std::vector<std::int64_t> values);
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> inputs,
                        std::vector<std::string> outputs, const std::string& name = "",
                        const std::string& domain = "");
  ModelBuilder& value_info(const std::string& name, std::vector<Dim> dims, int elem_type = 1);
  onnx::ModelProto& proto() { return model_; }
  // Writes the model to a fresh temp file and returns its path.
  std::string write(const std::string& stem) const;

 private:
  onnx::ModelProto model_;
};

void set_int_attr(onnx::NodeProto& node, const std::string& name, std::int64_t value);
void set_ints_attr(onnx::NodeProto& node, const std::string& name,
                   std::vector<std::int64_t> values);
void set_string_attr(onnx::NodeProto& node, const std::string& name, const std::string& value);

// A fresh path under the temp directory (not created).
std::string temp_path(const std::string& stem);
// Writes bytes to a fresh temp file.
std::string write_temp(const std::string& stem, const std::string& bytes);

}  // namespace memplan::test

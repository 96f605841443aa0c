#include "support/model_builder.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <mutex>

namespace memplan::test {
namespace {

void set_shape(onnx::ValueInfoProto* v, const std::vector<Dim>& dims, int elem_type) {
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* shape = t->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (std::holds_alternative<std::int64_t>(d)) {
      dim->set_dim_value(std::get<std::int64_t>(d));
    } else {
      dim->set_dim_param(std::get<std::string>(d));
    }
  }
}

}  // namespace

ModelBuilder::ModelBuilder(int opset) {
  model_.set_ir_version(8);
  auto* op = model_.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  auto* ms = model_.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  model_.mutable_graph()->set_name("test");
}

ModelBuilder& ModelBuilder::input(const std::string& name, std::vector<Dim> dims, int elem_type) {
  auto* v = model_.mutable_graph()->add_input();
  v->set_name(name);
  set_shape(v, dims, elem_type);
  return *this;
}

ModelBuilder& ModelBuilder::output(const std::string& name, std::vector<Dim> dims, int elem_type,
                                   bool with_shape) {
  auto* v = model_.mutable_graph()->add_output();
  v->set_name(name);
  // Without a shape, declare no type either: inference fills both.
  if (with_shape) set_shape(v, dims, elem_type);
  return *this;
}

ModelBuilder& ModelBuilder::initializer(const std::string& name, std::vector<std::int64_t> dims,
                                        int elem_type) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  for (auto d : dims) t->add_dims(d);
  return *this;
}

ModelBuilder& ModelBuilder::int64_constant(const std::string& name,
                                           std::vector<std::int64_t> values) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<std::int64_t>(values.size()));
  for (auto v : values) t->add_int64_data(v);
  return *this;
}

onnx::NodeProto& ModelBuilder::node(const std::string& op, std::vector<std::string> inputs,
                                    std::vector<std::string> outputs, const std::string& name,
                                    const std::string& domain) {
  auto* n = model_.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  n->set_domain(domain);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return *n;
}

ModelBuilder& ModelBuilder::value_info(const std::string& name, std::vector<Dim> dims,
                                       int elem_type) {
  auto* v = model_.mutable_graph()->add_value_info();
  v->set_name(name);
  set_shape(v, dims, elem_type);
  return *this;
}

std::string ModelBuilder::write(const std::string& stem) const {
  std::string bytes;
  model_.SerializeToString(&bytes);
  return write_temp(stem + ".onnx", bytes);
}

void set_int_attr(onnx::NodeProto& node, const std::string& name, std::int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void set_ints_attr(onnx::NodeProto& node, const std::string& name,
                   std::vector<std::int64_t> values) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto v : values) a->add_ints(v);
}

void set_string_attr(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

std::string temp_path(const std::string& stem) {
  static std::atomic<int> counter{0};
  static std::mutex mutex;
  static pid_t fresh_for = 0;
  const pid_t pid = getpid();
  auto dir = std::filesystem::temp_directory_path() / ("memplan-test-" + std::to_string(pid));
  {
    // Process ids are reused: a directory an earlier process of this id left
    // behind holds names this one is about to take (copy_file then fails
    // with "File exists"). Emptied once per process, forked children too.
    const std::lock_guard<std::mutex> lock(mutex);
    if (fresh_for != pid) {
      std::filesystem::remove_all(dir);
      fresh_for = pid;
    }
    std::filesystem::create_directories(dir);
  }
  return (dir / (std::to_string(counter++) + "-" + stem)).string();
}

std::string write_temp(const std::string& stem, const std::string& bytes) {
  std::string path = temp_path(stem);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace memplan::test

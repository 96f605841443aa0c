#include "ir/dim_binding.h"

#include <set>
#include <sstream>

#include "util/errors.h"

namespace memplan::ir {
namespace {

template <typename F>
void for_each_dim(onnx::ValueInfoProto& v, F&& f) {
  if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
  auto* shape = v.mutable_type()->mutable_tensor_type()->mutable_shape();
  for (int i = 0; i < shape->dim_size(); ++i) f(*shape->mutable_dim(i));
}

}  // namespace

std::set<std::string> bind_dims(onnx::ModelProto& model,
                                const std::map<std::string, std::int64_t>& dims,
                                const std::string& where) {
  auto* g = model.mutable_graph();
  std::set<std::string> initializer_names;
  for (const auto& t : g->initializer()) initializer_names.insert(t.name());

  std::set<std::string> unbound;
  std::set<std::string> used;
  auto check_negative = [&](const onnx::ValueInfoProto& v,
                            const onnx::TensorShapeProto_Dimension& d) {
    if (d.has_dim_value() && d.dim_value() < 0) {
      throw InputError(where + ": tensor '" + v.name() + "' has negative dim " +
                       std::to_string(d.dim_value()));
    }
  };
  for (auto& v : *g->mutable_input()) {
    for_each_dim(v, [&](onnx::TensorShapeProto_Dimension& d) {
      check_negative(v, d);
      if (!d.has_dim_param()) return;
      auto it = dims.find(d.dim_param());
      if (it == dims.end()) {
        // An input that is also an initializer takes its dims from the data.
        if (initializer_names.count(v.name()) == 0) unbound.insert(d.dim_param());
        return;
      }
      used.insert(d.dim_param());
      d.set_dim_value(it->second);
    });
  }
  if (!unbound.empty()) {
    std::ostringstream msg;
    msg << where << ": symbolic dims not bound:";
    for (const auto& n : unbound) msg << " " << n;
    msg << "; bind them with";
    for (const auto& n : unbound) msg << " --dim " << n << "=N";
    throw InputError(msg.str());
  }
  // Derived dims: bind the known names, clear the others (ORT writes names
  // like "unk__12" whose value only inference can tell).
  auto bind_or_clear = [&](onnx::ValueInfoProto& v) {
    for_each_dim(v, [&](onnx::TensorShapeProto_Dimension& d) {
      check_negative(v, d);
      if (!d.has_dim_param()) return;
      auto it = dims.find(d.dim_param());
      if (it != dims.end()) {
        used.insert(d.dim_param());
        d.set_dim_value(it->second);
      } else {
        d.clear_dim_param();
      }
    });
  };
  for (auto& v : *g->mutable_output()) bind_or_clear(v);
  for (auto& v : *g->mutable_value_info()) bind_or_clear(v);
  std::set<std::string> unused;
  for (const auto& [name, value] : dims)
    if (used.count(name) == 0) unused.insert(name);
  return unused;
}

}  // namespace memplan::ir

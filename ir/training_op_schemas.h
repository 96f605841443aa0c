#pragma once
#include <map>
#include <string>

#include "ir/onnx_op_fallbacks.h"
#include "onnx/defs/schema.h"

namespace memplan::ir {

// ONNX's schema registry plus shape rules for the ONNX Runtime training ops
// (com.microsoft) that training graphs contain, so ONNX shape inference can
// walk the whole forward + backward graph in one pass. Our rules cover only
// what sizing needs: output element types and shapes.
class TrainingSchemaRegistry final : public onnx::ISchemaRegistry {
 public:
  TrainingSchemaRegistry();
  const onnx::OpSchema* GetSchema(const std::string& key, int maxInclusiveVersion,
                                  const std::string& domain) const override;

  // The ops our rules cover, for docs and tests.
  std::vector<std::string> covered_ops() const;

 private:
  std::map<std::string, onnx::OpSchema> schemas_;  // by op name, domain com.microsoft
  OnnxOpFallbacks fallbacks_;
};

}  // namespace memplan::ir

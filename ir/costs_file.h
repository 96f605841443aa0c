#pragma once
// Reading a `memplan.costs` file, format 1 (COSTS_FORMAT.md §1).
#include <string>

#include "ir/costs.h"
#include "ir/device.h"

namespace memplan::ir {

// Parses and checks the whole file before returning: a missing or unreadable
// file, text that is not JSON, a wrong `format` or `version`, a key given
// twice, a value of the wrong type, or a negative, NaN, infinite or
// non-numeric number throws InputError naming the file and the key. Names of
// nodes and tensors are not checked against a graph here (make_node_costs
// does that). Keys the format does not define are ignored.
CostsFile read_costs_file(const std::string& path);

// `base` with every device field that `f` gives replaced; `source` then says
// which figures came from the file.
DeviceSpec apply_overrides(DeviceSpec base, const CostsFile& f);

}  // namespace memplan::ir

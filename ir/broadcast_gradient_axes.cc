#include "ir/broadcast_gradient_axes.h"

#include <algorithm>

namespace memplan::ir {

// ORT's BroadcastGradientArgs(a_shape, b_shape): the axes along which the
// gradients of A and B must be summed after a broadcasting op. Walking the
// dims from the back, a dim of 1 facing a larger one reduces that side; the
// leading dims of the longer shape reduce the shorter side. Lengths matter
// for sizes, values for the ReduceSum that follows.
std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>> broadcast_gradient_axes(
    const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> a_axes, b_axes;
  auto i = static_cast<int64_t>(a.size()) - 1, j = static_cast<int64_t>(b.size()) - 1;
  int64_t k = std::max(i, j);
  for (; i >= 0 && j >= 0; --i, --j, --k) {
    if (a[i] == b[j]) continue;
    if (a[i] == 1) {
      a_axes.push_back(k);
    } else if (b[j] == 1) {
      b_axes.push_back(k);
    } else {
      return std::nullopt;
    }
  }
  for (; k >= 0; --k) (i < 0 ? a_axes : b_axes).push_back(k);
  return std::make_pair(a_axes, b_axes);
}

}  // namespace memplan::ir

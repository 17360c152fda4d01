#include "common.hpp"

namespace svmkit {

void register_kernels(nb::module_ m) { (void)m; }

}  // namespace svmkit

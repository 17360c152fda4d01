#include "common.hpp"

namespace svmkit {

void register_linear(nb::module_ m) { (void)m; }

}  // namespace svmkit

#include "common.hpp"

namespace svmkit {

void register_dense(nb::module_ m) { (void)m; }

}  // namespace svmkit

#include "common.hpp"

namespace svmkit {

void register_smo(nb::module_ m) { (void)m; }

}  // namespace svmkit

// Where the shared measurement data (../shared/data) was at configure time:
// the default for `perseus carbon --eia` and the evaluation's job and
// power-limit profile. Thread safety: pure function.
#pragma once

#include <string>

namespace perseus::carbon {

std::string DefaultSharedDataDir();

}  // namespace perseus::carbon

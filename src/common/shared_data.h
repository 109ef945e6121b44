// Where the shared measurement data (../shared/data: the Perseus paper's
// profiles, EIA carbon traces, Zeus power-limit profiles) lives: the
// default of `perseus carbon --shared-data` and `perseus emulate
// --paper-data`. $PERSEUS_SHARED_DATA when set, else the folder CMake found
// at configure time (PERSEUS_SHARED_DATA), so the default does not depend on
// the working directory. Thread safety: reads the environment.
#pragma once

#include <string>

namespace perseus {

std::string SharedDataDir();

}  // namespace perseus

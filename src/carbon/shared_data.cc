// The configure-time shared data path (CMake sets PERSEUS_SHARED_DATA).
#include "carbon/shared_data.h"

#ifndef PERSEUS_SHARED_DATA
#define PERSEUS_SHARED_DATA "../shared/data"
#endif

namespace perseus::carbon {

std::string DefaultSharedDataDir() { return PERSEUS_SHARED_DATA; }

}  // namespace perseus::carbon

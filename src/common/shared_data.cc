#include "common/shared_data.h"

#include <cstdlib>

#ifndef PERSEUS_SHARED_DATA
#error "CMake defines PERSEUS_SHARED_DATA for this file"
#endif

namespace perseus {

std::string SharedDataDir() {
  const char* env = std::getenv("PERSEUS_SHARED_DATA");
  return env != nullptr && env[0] != '\0' ? env : PERSEUS_SHARED_DATA;
}

}  // namespace perseus

// version.cpp - see version.h.
#include "version.h"

#define HEED_STR2(x) #x
#define HEED_STR(x) HEED_STR2(x)

namespace heed {

const char* version() {
  return HEED_STR(HEED_VERSION_MAJOR) "." HEED_STR(HEED_VERSION_MINOR) "." HEED_STR(HEED_VERSION_PATCH);
}

}  // namespace heed

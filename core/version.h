// version.h - heed's version, in one place.
//
// The Makefile reads these three lines (make install writes them into heed.pc, heed-mpi.pc and
// heedConfigVersion.cmake from the templates in core/install/), and `make check-install`
// proves the installed files and heed::version() agree with them.
#pragma once

#define HEED_VERSION_MAJOR 0
#define HEED_VERSION_MINOR 5
#define HEED_VERSION_PATCH 0

namespace heed {

// "MAJOR.MINOR.PATCH" of the library that was linked (the header a program compiled against
// has the macros above; the two differ only when a program mixes installs).
const char* version();

}  // namespace heed

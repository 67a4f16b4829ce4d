/* nubo's version, readable from C and C++. CMake reads the project version from this file. */
#ifndef NUBO_VERSION_H
#define NUBO_VERSION_H

#define NUBO_VERSION_MAJOR 0
#define NUBO_VERSION_MINOR 1
#define NUBO_VERSION_PATCH 0

/* Bumped only by a deliberate, incompatible change of the C ABI (see docs/abi.md). */
#define NUBO_ABI_VERSION 2

#define NUBO_VERSION_NUMBER \
  (NUBO_VERSION_MAJOR * 10000 + NUBO_VERSION_MINOR * 100 + NUBO_VERSION_PATCH)

#endif

// Symbol visibility: libnubo is built with hidden visibility; NUBO_API marks its public API.
#pragma once

#if defined(NUBO_BUILDING_LIBRARY)
#define NUBO_API __attribute__((visibility("default")))
#else
#define NUBO_API
#endif

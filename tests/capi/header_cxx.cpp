// nubo.h compiles as C++11 and declares its functions extern "C"; nothing here runs.
#include "nubo.h"

#include <type_traits>

static_assert(std::is_same<decltype(&nubo_version), const char* (*)()>::value,
              "nubo.h declares C functions");
static_assert(std::is_standard_layout<nubo_device_info>::value, "info structs are plain C");

// The environment variables nubo reads (docs/env.md), checked in one call. C: nubo.h;
// Python: nubo.check_environment(); Rust: nubo::check_environment().
#pragma once

#include "nubo/export.hpp"

namespace nubo {

// Parses every variable of docs/env.md that is set; the first malformed one throws
// Error(invalid_argument) naming it and what it accepts. A program calls it first, so that a
// typo in the environment stops it before any work rather than surfacing, or being worked
// around with a warning, in the middle of it. The bundled tools do.
NUBO_API void check_environment();

}  // namespace nubo

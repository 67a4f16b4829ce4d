// What nubo-smi does once its flags are read: discover, then the table, the topology, the
// health or the preflight, and the --require-gpu gate.
#pragma once

#include "smi_flags.hpp"

namespace nubo_smi {

// The exit status: 0, 3 no GPU (--require-gpu), 4 degraded, 5 unusable, 1 an error, 130
// interrupted.
int run_smi(SmiFlags f);

}  // namespace nubo_smi

// What nubo-run does once its flags are read: check them, find where the processes meet, start
// them (again, for restarts and elastic rounds), and end with the job's exit status.
#pragma once

#include "run_flags.hpp"

namespace nubo_run {

// The exit status: 0 all succeeded, 2 bad flags, 75 stopped to be resumed, else the failed
// rank's status (128 + its signal).
int run_job(RunFlags f);

}  // namespace nubo_run

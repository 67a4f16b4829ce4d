// What nubo-train does once its flags are read: load the data, make the team, train with a
// progress line (and the live cost with --instance), checkpoint and resume, and report.
#pragma once

#include "train_flags.hpp"

namespace nubo_train {

// The process's exit status: 0 done, 1 an error, 75 stopped (interrupted, resumable).
int run_training(TrainFlags f);

}  // namespace nubo_train

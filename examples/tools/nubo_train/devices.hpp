// nubo-train's --devices: "cpu", "cpu:N" (N CPU workers), "sim:N" (N simulated GPUs), "cuda:0,1"
// (those GPUs); empty: every usable GPU, else one CPU worker. Under nubo-run the process joins
// the job with these devices as its own workers.
#pragma once

#include <string>

#include "nubo/parallel.hpp"

nubo::Team make_team(const std::string& spec);

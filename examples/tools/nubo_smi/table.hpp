// nubo-smi's text output: the device table, the topology matrix and the diagnoses.
#pragma once

#include <string>

#include "nubo/device.hpp"

namespace nubo_smi {

std::string device_table(const nubo::DeviceReport& report);
std::string topology_matrix(const nubo::DeviceReport& report);
std::string diagnoses_text(const nubo::DeviceReport& report);

}  // namespace nubo_smi

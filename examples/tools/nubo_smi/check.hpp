// nubo-smi's text for the preflight (nubo-smi check) and the health report (nubo-smi health).
#pragma once

#include <string>

#include "nubo/health.hpp"
#include "nubo/preflight.hpp"

namespace nubo_smi {

std::string preflight_text(const nubo::device::PreflightReport& report);
std::string health_text(const nubo::device::HealthReport& report);

}  // namespace nubo_smi

#include "devices.hpp"

#include "nubo/device.hpp"

nubo::Team make_team(const std::string& spec) {
  return nubo::Team::from_env(nubo::devices_from_spec(spec, "--devices"));
}

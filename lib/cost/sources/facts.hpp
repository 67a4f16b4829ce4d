// Hardware facts price lists leave out: how an instance's GPUs are linked and its network
// bandwidth (instance_facts.csv, from the providers' instance pages). A row without facts gets
// its GPU link derived from the GPU table and no network, so it is planned on one node only.
#pragma once

#include <string_view>

#include "device/backend/gpu_catalog.hpp"
#include "nubo/cost.hpp"

namespace nubo::cost::sources {

struct InstanceFacts {
  Interconnect interconnect = Interconnect::none;
  double network_gbps = 0;
  const nubo::detail::GpuModel* gpu = nullptr;  // the GPU it has, when a source may say otherwise
};

// nullptr when the table has no row for the instance.
const InstanceFacts* facts_of(std::string_view provider, std::string_view instance);

// The interconnect a GPU's form implies when no fact says: one GPU none; an 8-GPU board of a
// model built for NVSwitch nvswitch; other SXM boards NVLink; the rest PCIe.
Interconnect implied_interconnect(const nubo::detail::GpuModel& gpu, int gpus);

}  // namespace nubo::cost::sources

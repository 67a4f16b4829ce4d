// The fake backend table of fake_plugin.hpp as a loadable plugin: a team made with
// NUBO_CUDA_PLUGIN pointing here has "CUDA" workers whose work runs on the host and is logged
// with its stream. The tests read the log through nubo_fake_plugin_state (dlsym).
#include "fake_plugin.hpp"

extern "C" __attribute__((visibility("default"))) const nubo_cuda_backend_api*
nubo_cuda_backend_v2() noexcept {
  return nubo::testing::fake_api();
}

extern "C" __attribute__((visibility("default"))) nubo::testing::FakeGpu*
nubo_fake_plugin_state() noexcept {
  return &nubo::testing::fake();
}

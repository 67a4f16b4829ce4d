// Built instead of nccl_api.cpp when NCCL was not found: the table's NCCL functions stay null,
// and libnubo reports "this plugin was built without NCCL" when a communicator is asked for.
#include "backend_state.hpp"

namespace nubo::cuda_plugin {

void fill_nccl_functions(nubo_cuda_backend_api&) {}

}  // namespace nubo::cuda_plugin

// The application's own kernel for examples/cuda/own_stream.cpp, compiled by nvcc on its own
// (slow_fill.cu): nubo's headers are C++20, and CMake 3.25 cannot ask nvcc for C++20, so the
// host code that uses nubo is a .cpp and only this launcher crosses over.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

// Spins for about `spin` clock cycles, then writes `value` into x[0..n): a stand-in for a
// backward pass whose result lands late. Queued on `stream`; returns the launch's error.
cudaError_t launch_slow_fill(cudaStream_t stream, float* x, std::size_t n, float value,
                             long long spin);

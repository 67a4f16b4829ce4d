// The backend interface: everything nubo does on a device goes through one DeviceBackend per
// device. Three implementations: host (the CPU, OpenBLAS), sim (a simulated GPU: host memory
// and host threads, with the model's memory limit) and cuda (the plugin libnubo_cuda.so:
// cudart, cuBLAS). docs/backend.md describes them. The public Worker API (parallel.hpp) is a
// thin, checked layer over it; kernels that belong to one user (the trainer's model) are not
// here but in that user's own kernel table (lib/train/kernels.hpp).
//
// Conventions, for every implementation:
//  - Pointers called "device memory" come from allocate() of the same backend, or were handed
//    to adopt(). On host and sim they are ordinary host pointers (host_accessible() is true),
//    so host-side code such as the shared-memory communicator may read and write them
//    directly after synchronize().
//  - Work is stream-ordered: calls execute in the order they are made, each after the previous
//    one finished. cuda queues them on its current stream (its own, or one the application
//    handed to use_stream) and returns at once; host and sim run each call to completion
//    before returning (their "stream" is the caller's thread). Code written for the
//    asynchronous case is therefore correct on all three.
//  - A backend is driven by one thread at a time (its worker). bytes_in_use() may be read from
//    any thread.
//  - Sizes are element counts unless the name says bytes. Matrices are row-major, like C
//    arrays and NumPy (see nubo::Gemm).
//  - Errors are nubo::Error: out_of_memory (naming the device, the request and what is in
//    use), invalid_argument (bad sizes, a pointer of another device on sim or cuda, a dtype a
//    call does not take), unavailable (no driver or device), internal (a CUDA failure).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "nubo/compute.hpp"
#include "nubo/device.hpp"
#include "nubo/dtype.hpp"
#include "nubo_plugin/math.hpp"

namespace nubo::detail {

class BlasShare;

// A point in a backend's stream. Recorded with DeviceBackend::record, it completes when all the
// work submitted before the record has completed.
class DeviceEvent {
 public:
  virtual ~DeviceEvent() = default;
  virtual bool done() = 0;         // non-blocking query; true for an event never recorded
  virtual void synchronize() = 0;  // blocks the calling thread until done()
  virtual void* native() { return nullptr; }  // cuda: the cudaEvent_t
};

using nubo::Gemm;
using nubo::Transpose;

// A GEMM checked by plan_gemm (backend_checks.hpp): its leading dimensions filled in (0 ->
// packed), and the bytes each matrix spans, for range checks.
struct GemmPlan {
  Gemm g;
  std::size_t a_bytes = 0, b_bytes = 0, c_bytes = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  DeviceBackend() = default;
  DeviceBackend(const DeviceBackend&) = delete;
  DeviceBackend& operator=(const DeviceBackend&) = delete;

  virtual const Device& device() const = 0;
  // "cpu", "sim 2 (A100-SXM4-80GB)", "cuda 0 (NVIDIA H200)": for messages.
  virtual std::string describe() const = 0;
  // True when device memory is host memory (host, sim).
  virtual bool host_accessible() const = 0;

  // --- Memory -----------------------------------------------------------------------------
  // Device memory of at least `bytes` (0 is allowed and gives a unique non-null pointer),
  // aligned to 256 bytes. Throws Errc::out_of_memory naming the device.
  virtual void* allocate(std::size_t bytes) = 0;
  // Frees memory from allocate(); nullptr is ignored. Waits for work using it (cuda syncs).
  // Throws invalid_argument for a pointer this backend did not allocate.
  virtual void free(void* ptr) = 0;
  // Bytes allocated and not yet freed (adopted memory does not count).
  virtual std::size_t bytes_in_use() const = 0;
  // The most this backend may hold: the device's memory (sim: the model's), host: RAM.
  virtual std::size_t memory_limit() const = 0;
  // Memory the application owns, for this backend's operations until forget(ptr, bytes). Throws
  // invalid_argument when this device cannot use it (cuda: not device memory of this GPU);
  // sim records the range so that its pointer checks accept it. A range may be adopted more
  // than once; each adopt is matched by one forget.
  virtual void adopt(const void* ptr, std::size_t bytes) = 0;
  virtual void forget(const void* ptr, std::size_t bytes) noexcept = 0;

  // --- Copies (stream-ordered; host memory must stay valid until the copy has run) --------
  virtual void copy_to_device(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_on_device(void* dst, const void* src, std::size_t bytes) = 0;
  // Blocks until all work submitted so far has completed; rethrows an asynchronous failure.
  virtual void synchronize() = 0;
  // Host memory that copies to and from this device run fastest with: page-locked on cuda
  // (cudaHostAlloc), ordinary aligned memory on host and sim. free_host(nullptr) is ignored.
  virtual void* allocate_host(std::size_t bytes);
  virtual void free_host(void* ptr) noexcept;
  // Copies `bytes` from `src`, memory of the device `peer` drives, into this device's `dst`
  // (stream-ordered on this device; the caller has synchronised `peer`). Host and sim copy
  // directly; cuda copies peer to peer where the pair allows it. invalid_argument when the two
  // are of different kinds.
  virtual void copy_from_peer(void* dst, const DeviceBackend& peer, const void* src,
                              std::size_t bytes) = 0;

  // --- Streams and events -------------------------------------------------------------------
  // The stream, cuBLAS handle and device ordinal in use (nccl_comm is left null: the team's
  // communicator knows it). Host and sim: nulls and -1.
  virtual NativeHandles native() const = 0;
  // From now on queue all work on `stream`, a cudaStream_t of this device (null: CUDA's legacy
  // default stream), as NCCL does with the stream it is given; use_own_stream() goes back to
  // the backend's own. Work queued before the switch stays ordered before work queued after
  // it (the new stream waits for the old one). Host and sim have no streams: a non-null stream
  // is an invalid_argument, null is accepted and changes nothing.
  virtual void use_stream(void* stream) = 0;
  virtual void use_own_stream() = 0;
  virtual std::unique_ptr<DeviceEvent> create_event() = 0;
  virtual void record(DeviceEvent& event) = 0;
  // Later work on this backend waits until `event` completes; the event may come from another
  // backend of the same kind (cuda: another GPU). The calling thread does not block.
  virtual void wait(DeviceEvent& event) = 0;
  // The same for a cudaEvent_t the application recorded on a stream of its own. Host and sim:
  // invalid_argument (they have no CUDA events).
  virtual void wait_native(void* cuda_event) = 0;

  // --- GEMM (f32, f16 and bf16; accumulation in f32; tf32: f32 data, TF32 multiply) --------
  // A planned GEMM: Worker::gemm plans once (it needs the spans to check its buffers) and hands
  // the plan on, so the hot path checks nothing twice.
  virtual void gemm(const GemmPlan& plan, DType type, const void* a, const void* b, void* c) = 0;
  // Plans, then runs the planned GEMM.
  void gemm(const Gemm& g, DType type, const void* a, const void* b, void* c);

  // --- The host's cores ----------------------------------------------------------------------
  // Host and sim devices multiply on the CPU: worker `worker` of `share` gets an OpenBLAS with
  // the thread count it should use (openblas_copies.hpp). Until it is called they use the
  // process's own OpenBLAS. cuda ignores it: its GEMMs do not run on the host.
  virtual void use_openblas(std::shared_ptr<BlasShare> share, int worker) {
    (void)share;
    (void)worker;
  }
  // The threads this device's GEMMs run on the host; 0 for a device whose work does not.
  virtual int host_threads() const { return 0; }

  // --- The preflight's clock ---------------------------------------------------------------
  // Seconds the work run so far would take on the device a model describes (sim: its model's
  // attainable rates, derated by its profile), or nullopt where only a wall clock can tell
  // (host, cuda). The preflight times each measurement with it when there is one.
  virtual std::optional<double> modelled_seconds() const { return std::nullopt; }

  // --- Elementwise kernels (in place; x and y may be the same buffer) ---------------------
  // n elements of elem_bytes (1, 2, 4 or 8) each set to the low bytes of `pattern`: a value
  // already converted to the buffer's type.
  virtual void fill(void* x, std::size_t n, std::size_t elem_bytes, std::uint64_t pattern) = 0;
  // f32, f16 and bf16, computed in f32 and rounded once to the type (nearest even).
  virtual void scale(DType type, void* x, std::size_t n, float alpha) = 0;  // x *= alpha
  virtual void axpy(DType type, std::size_t n, float alpha, const void* x,
                    void* y) = 0;  // y += alpha x

  // --- Mixed precision and the optimiser's update (f32, f16, bf16) -------------------------
  // dst[i] = src[i] converted (any pair of the three; nearest even when narrowing).
  virtual void cast(DType from, const void* src, DType to, void* dst, std::size_t n) = 0;
  // x *= inv_scale in place (untouched when it is 1), then into stats, two f32 of device
  // memory: stats[0] set to 1 when an element is not finite (left as it was otherwise),
  // stats[1] += the sum of the squares of the elements (for gradient clipping by norm).
  virtual void unscale_check(DType type, void* x, std::size_t n, float inv_scale, float* stats) = 0;
  // The fused optimiser update of n elements (math::optimizer_step): master (fp32) from grad
  // (grad_type), with the state m (SGD's velocity, Adam's first moment) and v (Adam's second;
  // SGD does not read it); then, when param is not null, param[i] = master[i] in param_type.
  virtual void optimizer_step(const math::OptimizerStep& step, std::size_t n, float* master,
                              DType grad_type, const void* grad, float* m, float* v,
                              DType param_type, void* param) = 0;
};

// The backend of a device as discovery reported it: host, sim or cuda. For cuda it loads the
// plugin (NUBO_CUDA_PLUGIN, or libnubo_cuda.so beside libnubo) and throws Errc::unavailable
// with the reason (no plugin, no driver, no such device) when it cannot.
std::unique_ptr<DeviceBackend> make_backend(const Device& device);

}  // namespace nubo::detail

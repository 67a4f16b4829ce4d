// Data parallelism: a Team of workers, one per device, each on its own thread; buffers on the
// workers' devices (nubo's, or the application's own memory wrapped without a copy); the
// compute a worker does on them (GEMM, elementwise kernels) and the collectives that combine
// them (all_reduce, broadcast, all_gather, reduce_scatter, all_to_all, barrier), blocking or
// asynchronous.
// A team may span processes and hosts: a launcher (nubo-run, torchrun, srun, mpirun) starts
// the processes and Team::join() makes each one a worker, used from the application's own
// loop. docs/parallel.md has the whole story, including which thread may call what and the
// ordering rule for applications that run kernels of their own on a worker's GPU.
//
//   auto team = nubo::Team::join();          // one worker per process, from any launcher
//   nubo::Worker& w = team.worker();
//   for (auto& batch : batches) {             // the application's own loop, on its own thread
//     w.gemm({.trans_a = nubo::Transpose::yes, .m = in, .n = out, .k = rows}, x, dy, grad);
//     w.all_reduce(grad, nubo::ReduceOp::avg);
//   }
//
// Several workers in one process run a function each, on threads of their own:
//
//   nubo::Team team(nubo::discover().select({.count = 4}));
//   team.run([&](nubo::Worker& w) { ...; w.all_reduce(grad, nubo::ReduceOp::avg); });
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nubo/buffer.hpp"
#include "nubo/compute.hpp"
#include "nubo/device.hpp"
#include "nubo/dtype.hpp"
#include "nubo/export.hpp"

namespace nubo {

namespace detail {
class CollectiveHandle;
struct TeamState;
struct WorkerState;
}  // namespace detail

// How long a collective waits for the other ranks before it fails, naming the ones missing.
inline constexpr std::chrono::milliseconds kDefaultTimeout{60000};

struct TeamOptions {
  // 0: NUBO_TIMEOUT if set, else kDefaultTimeout.
  std::chrono::milliseconds timeout{0};
  // Pin each host worker (and its GEMM threads) to cores of its own, NUMA-aware; also turned
  // on by NUBO_CPU_BIND=1 (nubo-run --cpu-bind).
  bool cpu_bind = false;
  // Watch the health of this process's GPUs every so many seconds (nubo::device::HealthWatch;
  // 0: not at all): a new fatal XID or double-bit ECC error makes every collective fail at once
  // with Errc::cancelled, naming the GPU and the finding, in this process and the others.
  double health_watch_seconds = 0;
  // Threads for this process's GEMMs on the host, shared among its host workers (up to 4096);
  // 0: OPENBLAS_NUM_THREADS or OMP_NUM_THREADS, else the process's share of the cores.
  int gemm_threads = 0;
};

// A job of several processes. Ranks count processes here; a process holding k devices gives the
// team k workers (team ranks rank * k to rank * k + k - 1).
struct JobSpec {
  int rank = 0;              // this process, 0 .. world_size - 1
  int local_rank = 0;        // this process's index among those on its host
  int world_size = 1;        // processes in the job
  int local_world_size = 0;  // processes on this host; 0: unknown
  // "file:///shared/dir", "tcp://host:port" (hosted by rank 0's process) or
  // "redis://host:port/job".
  std::string rendezvous;
  // Who started the job: "nubo-run", "torchrun", "slurm", "mpirun", "skypilot"; "" when the
  // spec was not read from the environment.
  std::string launcher;
  bool whole_node = false;  // one process per host holds all its GPUs (SkyPilot)

  // From the environment, whatever started the job: nubo-run's NUBO_* variables, torchrun's
  // (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), Slurm's
  // (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_JOB_ID...), Open MPI's
  // (OMPI_COMM_WORLD_*) and SkyPilot's (SKYPILOT_NODE_RANK, SKYPILOT_NODE_IPS), in that order
  // (docs/parallel.md). Throws invalid_argument naming the variable that is missing or
  // malformed. With none of them set: a job of this process alone (rank 0 of 1), so a program
  // written for a launcher also runs on its own.
  NUBO_API static JobSpec from_env();
};

// The transport a team uses between two of its processes: "NCCL" between GPU workers; between
// host workers "shm" on one host (or "Gloo/TCP" with NUBO_SHM_DISABLE=1) and "Gloo/TCP"
// between hosts. docs/parallel.md, "Between processes".
NUBO_API std::string transport_between(bool same_host, bool gpu);

// Checks a rendezvous location ("file:///dir" or "redis://host[:port][/job]"); throws
// invalid_argument saying what is wrong, naming `what` (a flag or variable) as its source.
NUBO_API void check_rendezvous(std::string_view url, std::string_view what = "rendezvous");

// A collective in flight. wait() blocks until it has finished and rethrows its failure; the
// buffers it uses must not be touched, or freed, before then. Destroying an unwaited Pending
// waits for it and drops its error (the team's next collective reports the failure again).
class NUBO_API Pending {
 public:
  Pending();
  explicit Pending(std::unique_ptr<detail::CollectiveHandle> handle);
  Pending(Pending&&) noexcept;
  Pending& operator=(Pending&&) noexcept;
  ~Pending();
  void wait();
  bool done() const;  // true once wait() would not block

 private:
  std::unique_ptr<detail::CollectiveHandle> handle_;
};

// A worker's rows of a global batch: rows [begin, begin + count).
struct Shard {
  std::size_t begin = 0;
  std::size_t count = 0;
};

// One member of a team: Team::worker() for a process that joined with one worker, or handed to
// the function Team::run runs. Its methods may be called from any thread of the process, the
// main thread included; a worker takes its calls one at a time, in the order its callers get
// it (a blocking collective holds it until it returns). Every rank must issue the same
// collectives in the same order, so an application calling one worker from several threads
// orders those calls itself.
class NUBO_API Worker {
 public:
  int rank() const;        // in the team: 0 .. size() - 1
  int size() const;        // workers in the team, in every process
  int local_rank() const;  // among the workers of this process: 0 .. local_size() - 1
  int local_size() const;
  const Device& device() const;
  // The threads this worker's GEMMs run on the host: its share of the cores (docs/parallel.md,
  // "Sharing the cores"); 0 for a GPU worker, whose GEMMs do not run on the host.
  int host_threads() const;
  // The CPUs this worker is pinned to while it runs (TeamOptions::cpu_bind); empty: it floats.
  const std::vector<int>& cpus() const;

  // This worker's rows of a batch of n: n / size() rows each, and the first n % size() ranks
  // one more; rank r starts after the rows of ranks 0 .. r - 1. Every row belongs to exactly
  // one rank, and shard sizes differ by at most one.
  Shard shard(std::size_t n) const;

  // Memory on this worker's device.
  DeviceBuffer alloc(DType type, std::size_t count);
  template <class T>
  Buffer<T> alloc(std::size_t count) {
    return Buffer<T>(alloc(dtype_of_v<T>, count));
  }
  // A buffer over memory the application owns, without a copy: host memory for host and sim
  // workers, device memory of this worker's GPU for CUDA workers (checked with the driver).
  // nubo never frees it; it must outlive the buffer. Usable in every collective, gemm and
  // kernel. invalid_argument for a null pointer with count > 0, a size that overflows, or
  // memory of another device.
  DeviceBuffer wrap(void* data, DType type, std::size_t count);
  template <class T>
  Buffer<T> wrap(std::span<T> data) {
    return Buffer<T>(wrap(data.data(), dtype_of_v<T>, data.size()));
  }
  // A buffer over a DLPack tensor (NumPy, PyTorch, CuPy, JAX...), without a copy. On success
  // the buffer owns the tensor and calls its deleter when the buffer and everything sharing it
  // are gone; on failure (invalid_argument naming the problem: another device, a dtype nubo
  // has no type for, strides that are not compact row-major, a null tensor) the caller keeps
  // it. The buffer is one-dimensional: the tensor's elements in row-major order.
  DeviceBuffer from_dlpack(DLManagedTensor* tensor);
  // Bytes of device memory nubo holds on this worker's device (wrapped memory not counted).
  std::size_t bytes_in_use() const;

  // --- Compute -------------------------------------------------------------------------------
  // Everything a worker does is ordered on its stream: each call starts after the work queued
  // before it. On CUDA the calls queue and return at once (synchronize() waits); on host and
  // sim they run to completion before returning. Buffers must be this worker's (alloc, wrap,
  // from_dlpack, or their slices).
  //
  // C = alpha op(A) op(B) + beta C (see nubo::Gemm), in the buffers' type: f32, f16 or bf16
  // (the three the same). invalid_argument when a buffer is too small for the shape, C overlaps
  // A or B, or the types differ.
  void gemm(const Gemm& g, const DeviceBuffer& a, const DeviceBuffer& b, DeviceBuffer& c);
  // Every element = value, converted to the buffer's type (f16/bf16 round to nearest even;
  // integer types take whole numbers in their range, else invalid_argument).
  void fill(DeviceBuffer& x, double value);
  // x *= alpha and y += alpha * x, in f32 for f16/bf16 (rounded once); floating types only.
  void scale(DeviceBuffer& x, float alpha);
  void axpy(float alpha, const DeviceBuffer& x, DeviceBuffer& y);
  // Blocks until everything this worker queued has finished.
  void synchronize();

  // --- Mixed precision and the optimiser's update (docs/sharded.md) ---------------------------
  // out = in converted between f32, f16 and bf16 (nearest even when narrowing); the same size.
  void cast(const DeviceBuffer& in, DeviceBuffer& out);
  // Gradients of f32, f16 or bf16 multiplied by inv_scale in place (1: untouched), then checked:
  // stats (2 f32) gets stats[0] = 1 when an element is not finite (else left as it was) and
  // stats[1] += the sum of their squares. A loss scaler's unscale and a clipper's norm, in one
  // pass over the gradients.
  void unscale_check(DeviceBuffer& grads, float inv_scale, DeviceBuffer& stats);
  // The fused update of `master` (f32) from `grads` (f32, f16 or bf16, the same size) with the
  // optimiser's state: m is SGD's velocity or Adam's first moment, v Adam's second (SGD: may be
  // empty); each f32 and the size of master. With `params`, the updated values are also written
  // there in its type (the low-precision copy a model computes with). invalid_argument for a
  // size or type that does not match, or Adam's step < 1 or betas outside [0, 1).
  void optimizer_step(const OptimizerUpdate& update, DeviceBuffer& master,
                      const DeviceBuffer& grads, DeviceBuffer& m, DeviceBuffer& v,
                      DeviceBuffer* params = nullptr);

  // --- Streams and events --------------------------------------------------------------------
  // The CUDA stream, cuBLAS handle and NCCL communicator this worker uses, for kernels of the
  // application's own (null and -1 on host and sim workers).
  NativeHandles native() const;
  // From now on queue everything, collectives included, on `cuda_stream` (a cudaStream_t of
  // this worker's GPU; null is CUDA's legacy default stream, as in NCCL), after the work
  // queued so far. The stream must outlive its use. use_own_stream() goes back to the worker's
  // own stream. Host and sim workers have no streams: a non-null stream is an invalid_argument.
  void use_stream(void* cuda_stream);
  void use_own_stream();
  // An event at the current end of this worker's stream; wait_event makes this worker's later
  // work wait for an event (of any worker of the same kind) without blocking the thread;
  // wait_native_event does the same for a cudaEvent_t the application recorded on a stream of
  // its own (invalid_argument on host and sim workers).
  Event record_event();
  void wait_event(const Event& event);
  void wait_native_event(void* cuda_event);

  // The collectives. Every rank of the team calls the same ones, in the same order, with the
  // same sizes and types (mismatches are reported, not guessed at). Types: f32, f16, bf16, i32,
  // i64; ops: sum, avg, max, min (integer avg rounds towards zero).
  //  - all_reduce: in place; every rank ends with the reduction of all ranks' buffers;
  //  - broadcast: in place; every rank ends with rank root's buffer;
  //  - all_gather: out (size() * in.size() elements) gets rank r's in at r * in.size();
  //  - reduce_scatter: in holds size() * out.size() elements; rank r's out gets the reduction
  //    of block r of every rank's in;
  //  - all_to_all: in and out hold size() blocks of the same size; rank r's out gets block r of
  //    every rank's in, rank j's at block j (equal splits, as torch's all_to_all_single);
  //  - barrier: returns once every rank has called it.
  // A collective fails with Errc::timeout or Errc::unavailable (naming the rank that did not
  // come) when a peer does not take part within the team's timeout, with Errc::cancelled when
  // another worker failed, and with Errc::invalid_argument for a mismatch.
  void all_reduce(DeviceBuffer& buf, ReduceOp op = ReduceOp::sum);
  void broadcast(DeviceBuffer& buf, int root = 0);
  void all_gather(const DeviceBuffer& in, DeviceBuffer& out);
  void reduce_scatter(const DeviceBuffer& in, DeviceBuffer& out, ReduceOp op = ReduceOp::sum);
  void all_to_all(const DeviceBuffer& in, DeviceBuffer& out);
  void barrier();

  // The same, asynchronously: they run in the order they were issued, on this worker's progress
  // thread, while the worker goes on; wait on the Pending before using the buffers.
  [[nodiscard]] Pending all_reduce_async(DeviceBuffer& buf, ReduceOp op = ReduceOp::sum);
  [[nodiscard]] Pending broadcast_async(DeviceBuffer& buf, int root = 0);
  [[nodiscard]] Pending all_gather_async(const DeviceBuffer& in, DeviceBuffer& out);
  [[nodiscard]] Pending reduce_scatter_async(const DeviceBuffer& in, DeviceBuffer& out,
                                             ReduceOp op = ReduceOp::sum);
  [[nodiscard]] Pending all_to_all_async(const DeviceBuffer& in, DeviceBuffer& out);
  [[nodiscard]] Pending barrier_async();

  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

 private:
  friend struct detail::TeamState;
  explicit Worker(detail::WorkerState* state) : state_(state) {}
  detail::WorkerState* state_;
};

class NUBO_API Team {
 public:
  // One worker per device, all in this process. The host device (DeviceReport::host_device())
  // may be listed several times: each is a worker of its own on the CPU.
  explicit Team(const std::vector<Device>& devices, const TeamOptions& options = {});
  // This process's workers in a job of several processes (see JobSpec).
  Team(const std::vector<Device>& devices, const JobSpec& job, const TeamOptions& options = {});

  // Every usable GPU of this machine (real, or simulated by NUBO_SIM_DEVICES); the host CPU
  // when there is none.
  static Team all(const TeamOptions& options = {});
  // `workers` workers on the host CPU (1 to 1024), sharing its cores, in this process.
  static Team host(int workers, const TeamOptions& options = {});
  // Joins the job that started this process, as from_env(), for use from the caller's own
  // loop: team.worker() is this process's worker, called from any thread. With cpu_bind, the
  // calling thread is pinned to the worker's cores. Without a launcher: a team of this process
  // alone, so the same program runs on its own.
  static Team join(const TeamOptions& options = {});
  // Joins the job that started this process (JobSpec::from_env), with one worker: on GPU number
  // local_rank (modulo the number of GPUs) when the machine has GPUs, else on the CPU. A job
  // whose launcher runs one process per host (SkyPilot) takes all of the host's GPUs.
  static Team from_env(const TeamOptions& options = {});
  // Joins the job with these devices as this process's workers.
  static Team from_env(const std::vector<Device>& devices, const TeamOptions& options = {});

  Team(Team&&) noexcept;
  Team& operator=(Team&&) noexcept;
  // Across processes, waits (up to the timeout) until the other processes reach the end too.
  ~Team();

  int size() const;        // workers in the team, in every process
  int local_size() const;  // workers in this process
  // What the team is made of, for logs: one line per worker of this process (its rank and
  // device, the threads its GEMMs run on the host and why, the CPUs it is pinned to), then the
  // link between the processes ("shm", "Gloo/TCP", "NCCL", "shm within hosts, Gloo/TCP
  // between 2 hosts"). Loads OpenBLAS for host workers, to ask it.
  std::string describe() const;
  std::chrono::milliseconds timeout() const;
  Worker& worker(int local_rank);  // this process's workers, for setting up between runs
  // The worker of a process that has one (Team::join()); invalid_argument naming worker(i) and
  // run() when this process has several.
  Worker& worker();

  // Runs fn on every worker of this process at once, each on its own thread, and returns when
  // all have returned. When one throws, the team's pending and later collectives fail at once
  // (in the other processes too), and run() rethrows the first failure once every worker has
  // stopped. A team that failed this way in one process is usable again; a team spanning
  // processes is not (its peers were told to give up).
  void run(const std::function<void(Worker&)>& fn);

 private:
  explicit Team(std::unique_ptr<detail::TeamState> state);
  std::unique_ptr<detail::TeamState> state_;
};

}  // namespace nubo

#include "parallel/links/shm_link.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>

#include "common/crypto.hpp"
#include "common/process_alive.hpp"
#include "common/spin_wait.hpp"
#include "common/text.hpp"
#include "nubo/error.hpp"
#include "parallel/links/reduce.hpp"
#include "parallel/links/shm_segment.hpp"

namespace nubo::parallel {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kMagic = 0x316d6873'6f62756eULL;  // "nuboshm1"
constexpr std::size_t kMaxReason = 1024;
// How often a sleeping waiter wakes to check its peers are alive.
constexpr auto kLivenessPeriod = std::chrono::milliseconds(10);

// aborted: 0 while healthy; kWriting while the first failing process writes its reason; then
// kDone. Errc and the origin member are stored beside it.
constexpr std::uint32_t kWriting = 1, kDone = 2;

struct alignas(64) Control {
  std::atomic<std::uint64_t> magic;  // stored last by the creator
  std::uint64_t nonce;
  std::uint32_t members;
  std::uint32_t pad;
  std::uint64_t chunk_bytes;
  std::atomic<std::uint32_t> attached;
  std::atomic<std::uint32_t> wake;  // futex word: bumped when someone may be asleep
  std::atomic<std::uint32_t> sleepers;
  std::atomic<std::uint32_t> aborted;
  std::int32_t abort_code;
  std::int32_t abort_origin;
  char reason[kMaxReason];
};

struct alignas(64) Member {
  std::atomic<std::uint64_t> epoch;  // barriers this process has reached
  char pad[56];
  std::int64_t pid;
  std::uint64_t started;
  // The calls of its last two collectives, by parity of their number: a process that finished
  // collective n may record n + 1 while a slower one still compares the records of n.
  CallRecord calls[2];
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

std::size_t align_up(std::size_t v, std::size_t a) {
  return (v + a - 1) / a * a;
}

void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                std::chrono::nanoseconds limit) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(limit.count() / 1000000000);
  ts.tv_nsec = static_cast<long>(limit.count() % 1000000000);
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr,
            0);
}

void futex_wake_all(std::atomic<std::uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, INT32_MAX, nullptr,
            nullptr, 0);
}

std::uint64_t random_nonce() {
  std::array<std::byte, 8> b;
  crypto::random_bytes(b);
  std::uint64_t v = 0;
  std::memcpy(&v, b.data(), sizeof v);
  return v | 1;  // never 0, the value of a segment not yet set up
}

std::string seconds_text(std::chrono::milliseconds d) {
  auto ms = d.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + " s";
}

void copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

// The segment's layout for `members` processes and slots of `chunk` bytes: the control block,
// the member records, then two sets (alternating by chunk) of one slot per member and a
// result area.
struct Layout {
  std::size_t members_at, data_at, set_bytes, total;
  Layout(std::size_t members, std::size_t chunk) {
    members_at = align_up(sizeof(Control), 4096);
    data_at = align_up(members_at + members * sizeof(Member), 4096);
    set_bytes = (members + 1) * chunk;
    total = data_at + 2 * set_bytes;
  }
};

class ShmLink final : public Remote {
 public:
  ShmLink(std::shared_ptr<Store> store, const ShmLinkOptions& o)
      : o_(o), layout_(static_cast<std::size_t>(o.members), o.chunk_bytes) {
    const auto deadline = Clock::now() + o.timeout;
    if (o.member == 0) {
      segment_ = ShmSegment::create(layout_.total);
      auto* c = new (segment_.data()) Control();
      c->nonce = random_nonce();
      c->members = static_cast<std::uint32_t>(o.members);
      c->chunk_bytes = o.chunk_bytes;
      for (int m = 0; m < o.members; ++m) new (member(m)) Member();
      c->magic.store(kMagic, std::memory_order_release);
      store->set(o.key, segment_.name() + " " + std::to_string(c->nonce));
    } else {
      open_published(*store, deadline);
    }
    Member& me = *member(o.member);
    me.pid = static_cast<std::int64_t>(::getpid());
    me.started = proc::start_time(me.pid);
    ctl().attached.fetch_add(1, std::memory_order_seq_cst);
    wait_attached(deadline);
    // Everyone has mapped it: the name can go, so that nothing is left in /dev/shm whatever
    // happens to the processes from now on.
    segment_.unlink();
    for (int m = 0; m < o.members; ++m) started_.push_back(member(m)->started);
    spin_ = static_cast<int>(std::thread::hardware_concurrency()) >= o.members;
  }

  ~ShmLink() override { segment_.unlink(); }

  int rank() const override { return o_.member; }
  int size() const override { return o_.members; }

  void run(const Call& call, const Step& step) override {
    throw_if_broken();
    call_ = &call;
    ++collectives_;
    record(call);
    switch (step.kind) {
      case StepKind::reduce:
        return reduce(step);
      case StepKind::broadcast:
        return broadcast(step);
      case StepKind::gather:
        return gather(step);
      case StepKind::exchange:
        return exchange(step);
      case StepKind::barrier:
        barrier(true);
        return;
    }
  }

  void abort(const std::string& cause) noexcept override {
    set_abort(Errc::cancelled, cause);
    try {
      mark_broken(Errc::cancelled, cause);
    } catch (...) {  // out of memory for the message: the segment's flag still stops the others
    }
  }

 private:
  Control& ctl() const { return *static_cast<Control*>(segment_.data()); }
  Member* member(int m) const {
    return reinterpret_cast<Member*>(static_cast<unsigned char*>(segment_.data()) +
                                     layout_.members_at) +
           m;
  }
  // Member m's slot, or the result area (m == members), in the set of chunk number `chunk`.
  unsigned char* slot(std::uint64_t chunk, int m) const {
    return static_cast<unsigned char*>(segment_.data()) + layout_.data_at +
           (chunk & 1) * layout_.set_bytes + static_cast<std::size_t>(m) * o_.chunk_bytes;
  }
  unsigned char* result(std::uint64_t chunk) const { return slot(chunk, o_.members); }

  void open_published(Store& store, Clock::time_point deadline) {
    const long creator = o_.pids.at(0);
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      const std::string value = store.get(o_.key, std::max(left, std::chrono::milliseconds(1)));
      const auto fields = text::split_whitespace(value);
      if (fields.size() == 2) {
        try {
          segment_ = ShmSegment::open(std::string(fields[0]), creator, layout_.total);
          const auto nonce = static_cast<std::uint64_t>(std::stoull(std::string(fields[1])));
          if (ctl().magic.load(std::memory_order_acquire) == kMagic && ctl().nonce == nonce &&
              ctl().members == static_cast<std::uint32_t>(o_.members) &&
              ctl().chunk_bytes == o_.chunk_bytes)
            return;
        } catch (const Error&) {  // an earlier job's record: wait for this job's
        } catch (const std::exception&) {
        }
      }
      if (Clock::now() >= deadline)
        throw Error(Errc::unavailable, o_.names.at(0) + " did not share its memory segment with " +
                                           o_.names.at(static_cast<std::size_t>(o_.member)) +
                                           " within " + seconds_text(o_.timeout) +
                                           " (it published '" + value.substr(0, 120) + "' under " +
                                           o_.key + ")");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  void wait_attached(Clock::time_point deadline) {
    while (ctl().attached.load(std::memory_order_acquire) <
           static_cast<std::uint32_t>(o_.members)) {
      if (Clock::now() >= deadline) {
        std::vector<std::string> missing;
        for (int m = 0; m < o_.members; ++m)
          if (member(m)->started == 0) missing.push_back(o_.names.at(static_cast<std::size_t>(m)));
        segment_.unlink();
        throw Error(Errc::unavailable, text::join(missing, ", ") +
                                           " did not map the job's shared memory within " +
                                           seconds_text(o_.timeout));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  void record(const Call& call) { member(o_.member)->calls[collectives_ & 1] = call.record; }

  std::string head() const {
    return call_->name() + " (collective #" + std::to_string(call_->seq()) + ")";
  }

  // After the first barrier of a collective: every process compares all the records, so all
  // reach the same verdict.
  void check_calls() const {
    std::vector<std::string> differ;
    for (int m = 0; m < o_.members && differ.size() < 4; ++m) {
      if (m == o_.member) continue;
      const CallRecord& theirs = member(m)->calls[collectives_ & 1];
      if (auto d = difference(*call_, theirs); !d.empty())
        differ.push_back(o_.names.at(static_cast<std::size_t>(m)) + " " + d);
    }
    if (!differ.empty())
      throw Error(Errc::invalid_argument,
                  "collective #" + std::to_string(call_->seq()) +
                      " differs between the processes: " +
                      o_.names.at(static_cast<std::size_t>(o_.member)) + " (this process) called " +
                      call_->name() + ", " + text::join(differ, ", ") +
                      "; every rank must make the same collective calls, with the same sizes "
                      "and types, in the same order");
  }

  // --- Barriers -------------------------------------------------------------------------

  bool reached(std::uint64_t e) const {
    for (int m = 0; m < o_.members; ++m)
      if (member(m)->epoch.load(std::memory_order_acquire) < e) return false;
    return true;
  }

  void barrier(bool first_of_call) {
    const std::uint64_t e = ++epoch_;
    member(o_.member)->epoch.store(e, std::memory_order_seq_cst);
    if (ctl().sleepers.load(std::memory_order_seq_cst) > 0) {
      ctl().wake.fetch_add(1, std::memory_order_seq_cst);
      futex_wake_all(&ctl().wake);
    }
    wait_for(e);
    if (first_of_call) check_calls();
  }

  void wait_for(std::uint64_t e) {
    // Poll first (spin_wait.hpp says why), then sleep on the futex.
    if (spin_ && spin_until([&] { return reached(e); }, [&] { throw_if_aborted(); })) return;
    const auto deadline = Clock::now() + o_.timeout;
    auto next_check = Clock::now();
    for (;;) {
      if (reached(e)) return;
      throw_if_aborted();
      const auto now = Clock::now();
      if (now >= next_check) {
        check_alive(e);
        next_check = now + kLivenessPeriod;
      }
      if (now >= deadline) {
        std::vector<std::string> late;
        for (int m = 0; m < o_.members; ++m)
          if (member(m)->epoch.load() < e) late.push_back(o_.names.at(static_cast<std::size_t>(m)));
        fail(Errc::timeout, "timed out after " + seconds_text(o_.timeout) + ": " +
                                text::join(late, ", ") +
                                " did not join it (stuck, or it made a different number of "
                                "collective calls)");
      }
      const std::uint32_t w = ctl().wake.load(std::memory_order_seq_cst);
      ctl().sleepers.fetch_add(1, std::memory_order_seq_cst);
      if (!reached(e) && ctl().aborted.load() == 0) futex_wait(&ctl().wake, w, kLivenessPeriod);
      ctl().sleepers.fetch_sub(1, std::memory_order_seq_cst);
    }
  }

  void check_alive(std::uint64_t e) {
    for (int m = 0; m < o_.members; ++m) {
      if (m == o_.member || member(m)->epoch.load() >= e) continue;
      const Member& peer = *member(m);
      if (proc::alive(static_cast<long>(peer.pid), started_[static_cast<std::size_t>(m)])) continue;
      fail(Errc::unavailable, o_.names.at(static_cast<std::size_t>(m)) + " is gone (pid " +
                                  std::to_string(peer.pid) +
                                  "): it exited or was killed while the others waited for it "
                                  "in shared memory");
    }
  }

  // Records the first failure in the segment and wakes everyone.
  void set_abort(Errc code, const std::string& why) noexcept {
    if (!segment_.data()) return;
    Control& c = ctl();
    std::uint32_t expected = 0;
    if (c.aborted.compare_exchange_strong(expected, kWriting)) {
      c.abort_code = static_cast<std::int32_t>(code);
      c.abort_origin = o_.member;
      const std::size_t n = std::min(why.size(), kMaxReason - 1);
      std::memcpy(c.reason, why.data(), n);
      c.reason[n] = '\0';
      c.aborted.store(kDone, std::memory_order_release);
    }
    c.wake.fetch_add(1, std::memory_order_seq_cst);
    futex_wake_all(&c.wake);
  }

  void throw_if_aborted() {
    const std::uint32_t state = ctl().aborted.load(std::memory_order_acquire);
    if (state == 0) return;
    while (ctl().aborted.load(std::memory_order_acquire) == kWriting) std::this_thread::yield();
    const Control& c = ctl();
    const std::string why(c.reason, strnlen(c.reason, kMaxReason));
    const auto code = static_cast<Errc>(c.abort_code);
    // Another process gave up (cancelled: its reason says why) or saw a peer die or time out.
    mark_broken(code, head() + " failed: " + why);
    throw_if_broken();
  }

  // The first failure: the reason goes to the other processes through the segment, and every
  // later collective of this one fails with it too.
  [[noreturn]] void fail(Errc code, const std::string& reason) {
    set_abort(code, reason);
    mark_broken(code, head() + " failed: " + reason);
    std::lock_guard<std::mutex> lock(mutex_);
    throw Error(broken_code_, broken_why_);
  }

  void mark_broken(Errc code, const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (broken_) return;
    broken_code_ = code;
    broken_why_ = why;
    broken_ = true;
  }

  void throw_if_broken() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (broken_) throw Error(broken_code_, broken_why_);
  }

  // --- Collectives ----------------------------------------------------------------------

  std::size_t chunks_of(std::size_t count, std::size_t per_chunk) const {
    return std::max<std::size_t>(1, (count + per_chunk - 1) / per_chunk);
  }

  // Each process keeps its own slice of every chunk in its buffer: it copies only the others'
  // slices in, reduces its slice straight from its buffer (into the result area and its
  // buffer), and copies only the others' slices of the result out. With chunks that stay in
  // the caches, the buffer is read and written once, like a memcpy.
  void reduce(const Step& a) {
    const std::size_t es = dtype_size(a.type);
    const std::size_t per = o_.chunk_bytes / es;
    const std::size_t chunks = chunks_of(a.count, per);
    auto* out = static_cast<unsigned char*>(a.out);
    const std::uint64_t base = chunk_number_;
    chunk_number_ += chunks;
    auto elems = [&](std::size_t c) { return std::min(per, a.count - std::min(a.count, c * per)); };
    auto mine = [&](std::size_t c) { return slice_of(elems(c), o_.members, o_.member); };
    // Copies the parts of a chunk outside this process's slice, from `src` to `dst`.
    auto around_mine = [&](std::size_t c, unsigned char* dst, const unsigned char* src) {
      const Slice s = mine(c);
      copy(dst, src, s.begin * es);
      const std::size_t end = s.begin + s.count;
      copy(dst + end * es, src + end * es, (elems(c) - end) * es);
    };
    auto copy_in = [&](std::size_t c) {
      around_mine(c, slot(base + c, o_.member), out + c * per * es);
    };
    copy_in(0);
    barrier(true);
    std::vector<const void*> ins(static_cast<std::size_t>(o_.members));
    for (std::size_t c = 0; c < chunks; ++c) {
      unsigned char* chunk = out + c * per * es;
      const Slice s = mine(c);
      for (int m = 0; m < o_.members; ++m)
        ins[static_cast<std::size_t>(m)] = m == o_.member ? chunk : slot(base + c, m);
      void* outs[2] = {result(base + c), chunk};
      reduce_ranks(a.type, a.op, ins.data(), o_.members, outs, 2, s.begin, s.count);
      if (c + 1 < chunks) copy_in(c + 1);
      barrier(false);
      around_mine(c, chunk, result(base + c));
    }
  }

  void broadcast(const Step& a) {
    const std::size_t es = dtype_size(a.type);
    const std::size_t per = o_.chunk_bytes / es;
    const std::size_t chunks = chunks_of(a.count, per);
    auto* out = static_cast<unsigned char*>(a.out);
    const std::uint64_t base = chunk_number_;
    chunk_number_ += chunks;
    const bool root = a.root == o_.member;
    for (std::size_t c = 0; c < chunks; ++c) {
      const std::size_t bytes = std::min(per, a.count - std::min(a.count, c * per)) * es;
      if (root) copy(result(base + c), out + c * per * es, bytes);
      barrier(c == 0);
      if (!root) copy(out + c * per * es, result(base + c), bytes);
    }
  }

  void gather(const Step& a) {
    const std::size_t es = dtype_size(a.type);
    const std::size_t per = o_.chunk_bytes / es;
    const std::size_t chunks = chunks_of(a.count, per);
    const auto* in = static_cast<const unsigned char*>(a.in);
    auto* out = static_cast<unsigned char*>(a.out);
    const std::uint64_t base = chunk_number_;
    chunk_number_ += chunks;
    for (std::size_t c = 0; c < chunks; ++c) {
      const std::size_t bytes = std::min(per, a.count - std::min(a.count, c * per)) * es;
      copy(slot(base + c, o_.member), in + c * per * es, bytes);
      barrier(c == 0);
      for (int m = 0; m < o_.members; ++m)
        copy(out + (static_cast<std::size_t>(m) * a.count + c * per) * es, slot(base + c, m),
             bytes);
    }
  }

  // Each round moves the same part of every block: a process copies its part of each block into
  // its slot (block q at q * part), and after the barrier takes block `member` of every slot.
  void exchange(const Step& a) {
    const std::size_t es = dtype_size(a.type);
    const auto n = static_cast<std::size_t>(o_.members);
    const std::size_t per = o_.chunk_bytes / (es * n);
    if (per == 0)
      throw Error(Errc::internal, head() + ": chunks of " + std::to_string(o_.chunk_bytes) +
                                      " bytes cannot hold a part of every block");
    const std::size_t chunks = chunks_of(a.count, per);
    const auto* in = static_cast<const unsigned char*>(a.in);
    auto* out = static_cast<unsigned char*>(a.out);
    const std::uint64_t base = chunk_number_;
    chunk_number_ += chunks;
    const auto me = static_cast<std::size_t>(o_.member);
    for (std::size_t c = 0; c < chunks; ++c) {
      const std::size_t bytes = std::min(per, a.count - std::min(a.count, c * per)) * es;
      unsigned char* mine = slot(base + c, o_.member);
      for (std::size_t q = 0; q < n; ++q)
        copy(mine + q * bytes, in + (q * a.count + c * per) * es, bytes);
      barrier(c == 0);
      for (std::size_t m = 0; m < n; ++m)
        copy(out + (m * a.count + c * per) * es, slot(base + c, static_cast<int>(m)) + me * bytes,
             bytes);
    }
  }

  ShmLinkOptions o_;
  Layout layout_;
  ShmSegment segment_;
  std::vector<std::uint64_t> started_;  // each member's start time, read once all attached
  bool spin_ = true;
  std::uint64_t epoch_ = 0;         // barriers this process has passed
  std::uint64_t chunk_number_ = 0;  // chunks moved so far: picks the set of slots
  std::uint64_t collectives_ = 0;   // collectives run so far: picks the call record
  const Call* call_ = nullptr;      // the collective in progress, for messages
  mutable std::mutex mutex_;        // the three below: abort() may come from another thread
  bool broken_ = false;
  Errc broken_code_ = Errc::unavailable;
  std::string broken_why_;
};

}  // namespace

std::size_t shm_chunk_bytes(int members) {
  constexpr std::size_t kMost = 512 * 1024, kBudget = 16 << 20, kLeast = 16 * 1024;
  const std::size_t fit = kBudget / (2 * (static_cast<std::size_t>(std::max(members, 1)) + 1));
  return std::clamp<std::size_t>(fit / 4096 * 4096, kLeast, kMost);
}

std::shared_ptr<Remote> connect_shm(std::shared_ptr<Store> store, ShmLinkOptions options) {
  if (options.chunk_bytes == 0) options.chunk_bytes = shm_chunk_bytes(options.members);
  if (options.members < 2 || options.member < 0 || options.member >= options.members ||
      options.pids.size() != static_cast<std::size_t>(options.members) ||
      options.names.size() != static_cast<std::size_t>(options.members) ||
      options.chunk_bytes < 64 || options.chunk_bytes % 64 != 0)
    throw Error(Errc::invalid_argument, "connect_shm: inconsistent options");
  return std::make_shared<ShmLink>(std::move(store), options);
}

}  // namespace nubo::parallel

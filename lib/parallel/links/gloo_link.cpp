#include "parallel/links/gloo_link.hpp"

#include "nubo/error.hpp"

#if NUBO_HAVE_GLOO
#include <gloo/barrier_all_to_all.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/buffer.h>
#include <gloo/transport/tcp/device.h>

#include <csignal>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

#include "common/text.hpp"
#include "parallel/links/gloo_algorithms.hpp"
#include "parallel/links/reduce.hpp"
#include "parallel/rendezvous/meet.hpp"

namespace nubo::parallel {
namespace {

using Clock = std::chrono::steady_clock;

// How long a failing process waits for the others' notes before naming the silent ones. The
// survivors notice a dead peer within milliseconds (its sockets close), and the first to fail
// closes its own connections, which wakes the rest; 2 s leaves room for a loaded machine.
constexpr std::chrono::milliseconds kGrace{2000};
// Failure notes carry a message; they are bounded like everything read from the store.
constexpr std::size_t kMaxNote = 2000;
constexpr std::uint32_t kMagic = 0x6e75626fu;  // "nubo"
// Collectives of up to kMaxSmall bytes travel with their headers; the buffers for that (two
// sets, to and from every peer) are kept within kSmallBudget bytes.
constexpr std::size_t kMaxSmall = 256 * 1024;
constexpr std::size_t kSmallBudget = 8 * 1024 * 1024;

// What every process sends before a collective's data: nubo's magic, then the call.
struct Header {
  std::uint32_t magic;
  std::uint32_t pad;
  CallRecord call;  // its flag: the sender has the algorithm built
};
static_assert(sizeof(Header) == 32);

// nubo's store seen as Gloo's, for connectFullMesh. Every wait is bounded by the link's timeout.
class StoreAdapter final : public gloo::rendezvous::Store {
 public:
  StoreAdapter(std::shared_ptr<parallel::Store> store, std::chrono::milliseconds timeout)
      : store_(std::move(store)), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(safe(key), std::string_view(data.data(), data.size()));
  }
  std::vector<char> get(const std::string& key) override {
    auto v = store_->get(safe(key), timeout_);
    return std::vector<char>(v.begin(), v.end());
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& t) override {
    const auto limit = t.count() > 0 ? std::min(t, timeout_) : timeout_;
    for (const auto& k : keys) store_->get(safe(k), limit);
  }

 private:
  // Gloo's keys are ranks and the like; anything outside the store's alphabet becomes '_'.
  static std::string safe(const std::string& key) {
    std::string s = "gloo/" + key.substr(0, 200);
    for (auto& c : s) {
      const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
                      c == '-' || c == '/';
      if (!ok) c = '_';
    }
    return s;
  }
  std::shared_ptr<parallel::Store> store_;
  std::chrono::milliseconds timeout_;
};

std::string seconds_text(std::chrono::milliseconds d) {
  auto ms = d.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + " s";
}

// Building an algorithm allocates its scratch space and registers buffers with every
// connection, which costs more than a small collective; a training loop reduces the same
// buffers step after step, so the recent ones are kept. Each holds up to twice its buffer in
// scratch space, hence a bound on both the number and the bytes. The number must exceed a step's
// distinct collectives (a sharded optimizer's: a reduction and an all-gather per slice), or
// every call rebuilds its algorithm.
constexpr std::size_t kMaxCached = 64;
constexpr std::size_t kMaxCachedBytes = std::size_t{1} << 30;

// Gloo's TCP transport writes to sockets without MSG_NOSIGNAL, so a peer that dies makes the
// next write raise SIGPIPE, whose default action kills this process before nubo can report the
// dead rank. Like gRPC and most network libraries, nubo ignores SIGPIPE when nobody else has
// chosen what to do with it; a handler the application installed is left alone.
void ignore_default_sigpipe() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL)
    std::signal(SIGPIPE, SIG_IGN);
}

class GlooLink final : public Remote {
 public:
  GlooLink(std::shared_ptr<Store> store, const GlooLinkOptions& o)
      : store_(std::move(store)), o_(o) {
    ignore_default_sigpipe();
    gloo::transport::tcp::attr attr;
    attr.hostname = o.address;
    try {
      device_ = gloo::transport::tcp::CreateDevice(attr);
      ctx_ = std::make_shared<gloo::rendezvous::Context>(o.rank, o.size);
      ctx_->setTimeout(o.timeout);
      StoreAdapter adapter(store_, o.timeout);
      ctx_->connectFullMesh(adapter, device_);
      // Headers travel in buffers bound to each connection, two sets used alternately (a
      // peer may send the next message before this process has read the last). A small
      // collective's data rides along with its header (see run()).
      small_limit_ = std::min<std::size_t>(
          kMaxSmall,
          (kSmallBudget / (4 * static_cast<std::size_t>(o.size - 1))) & ~std::size_t{63});
      const std::size_t capacity = sizeof(Header) + small_limit_;
      const int slot = ctx_->nextSlot(2);
      for (int p = 0; p < 2; ++p) {
        mine_[p].assign(capacity, 0);
        theirs_[p].assign(static_cast<std::size_t>(o.size), std::vector<unsigned char>(capacity));
        send_[p].resize(static_cast<std::size_t>(o.size));
        recv_[p].resize(static_cast<std::size_t>(o.size));
        for (int q = 0; q < o.size; ++q) {
          if (q == o.rank) continue;
          auto& pair = ctx_->getPair(q);
          send_[p][static_cast<std::size_t>(q)] =
              pair->createSendBuffer(slot + p, mine_[p].data(), capacity);
          recv_[p][static_cast<std::size_t>(q)] = pair->createRecvBuffer(
              slot + p, theirs_[p][static_cast<std::size_t>(q)].data(), capacity);
        }
      }
      barrier_ = std::make_unique<gloo::BarrierAllToAll>(ctx_);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(Errc::unavailable, "rank " + std::to_string(o.rank) +
                                         " cannot connect to the other processes of the job "
                                         "(through " +
                                         store_->describe() + ", at address " + o.address +
                                         "): " + trimmed(e.what()));
    }
  }

  ~GlooLink() override {
    // A last barrier so that no process closes its sockets while a peer still reads the final
    // collective's bytes from them (a close with unread data resets the connection).
    if (!broken_.load()) {
      try {
        barrier_->run();
      } catch (...) {  // a peer already gone: nothing left to protect
      }
    }
    cache_.clear();
  }

  int rank() const override { return o_.rank; }
  int size() const override { return o_.size; }

  void run(const Call& call, const Step& action) override {
    if (broken_.load()) {
      std::lock_guard<std::mutex> lock(mutex_);
      throw Error(broken_code_, broken_why_);
    }
    const std::size_t bytes = action.bytes();
    // An exchange sends its whole input: a block for every process.
    const std::size_t sent =
        action.kind == StepKind::exchange ? bytes * static_cast<std::size_t>(o_.size) : bytes;
    // Small collectives travel whole with the headers: one exchange instead of two, which is
    // the whole cost of a small all-reduce. Each process then reduces in rank order, so all
    // get the same result. An exchange sends every process all its blocks that way, size()
    // times what it needs, so only up to a size()-th of the limit.
    const std::size_t limit = action.kind == StepKind::exchange
                                  ? small_limit_ / static_cast<std::size_t>(o_.size)
                                  : small_limit_;
    const bool small = sent <= limit && action.kind != StepKind::barrier;
    if (small) {
      const bool from_in = action.kind == StepKind::gather || action.kind == StepKind::exchange;
      const void* payload = from_in ? action.in : action.out;
      const bool sends = action.kind != StepKind::broadcast || action.root == o_.rank;
      const std::size_t p = exchange(call, false, sends ? payload : nullptr, sends ? sent : 0);
      finish_small(action, bytes, p);
      return;
    }
    const Step& key = action;
    auto cached =
        std::find_if(cache_.begin(), cache_.end(), [&](const Cached& c) { return c.key == key; });
    const std::size_t p = exchange(call, cached != cache_.end(), nullptr, 0);
    if (action.count > static_cast<std::size_t>(INT32_MAX)) {
      throw Error(Errc::unsupported, call.name() +
                                         ": more than 2^31 - 1 elements cannot "
                                         "cross processes in one collective");
    }
    try {
      if (action.kind == StepKind::barrier) {
        barrier_->run();
        return;
      }
      // Every process said (in its header) whether it has this algorithm built: building
      // consumes connection slots, so all build, or none.
      bool all_cached = cached != cache_.end();
      for (int q = 0; q < o_.size; ++q) {
        if (q != o_.rank) all_cached = all_cached && header_of(p, q).call.flag == 1;
      }
      if (all_cached) {
        cache_.splice(cache_.begin(), cache_, cached);
      } else {
        if (cached != cache_.end()) cache_.erase(cached);
        cache_.push_front(Cached{key, make_algorithm(ctx_, key), 2 * bytes});
        trim_cache();
      }
      cache_.front().algo->run();
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      fail(call, e.what(), {});
    }
  }

  void abort(const std::string& cause) noexcept override {
    try {
      if (!broken_.exchange(true)) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          broken_code_ = Errc::cancelled;
          broken_why_ = cause;
        }
        note("origin", cause);
      }
      close();
    } catch (...) {  // abort is best effort: the peers time out if the note cannot be written
    }
  }

 private:
  struct Cached {
    Step key;
    std::unique_ptr<gloo::Algorithm> algo;
    std::size_t scratch = 0;
  };

  void trim_cache() {
    std::size_t total = 0;
    for (const auto& c : cache_) total += c.scratch;
    while (cache_.size() > 1 && (cache_.size() > kMaxCached || total > kMaxCachedBytes)) {
      total -= cache_.back().scratch;
      cache_.pop_back();
    }
  }

  static std::string trimmed(std::string s) {
    // Gloo prefixes its messages with "[file:line] "; users need the rest.
    if (!s.empty() && s[0] == '[') {
      auto end = s.find("] ");
      if (end != std::string::npos) s = s.substr(end + 2);
    }
    if (s.size() > 300) s = s.substr(0, 300) + "...";
    return s;
  }

  std::string process_name(int p) const {
    if (!o_.names.empty()) return o_.names.at(static_cast<std::size_t>(p));
    return parallel::process_name(p, o_.local_size);
  }

  Header header_of(std::size_t p, int q) const {
    Header h;
    std::memcpy(&h, theirs_[p][static_cast<std::size_t>(q)].data(), sizeof h);
    return h;
  }
  const unsigned char* payload_of(std::size_t p, int q) const {
    return theirs_[p][static_cast<std::size_t>(q)].data() + sizeof(Header);
  }

  // Sends this process's header (and `payload`, at most small_limit_ bytes) to every other and
  // receives theirs; all compare the same set, so a mismatch fails every process with the same
  // message, before any data is used. Returns the buffer set (parity) holding their messages.
  std::size_t exchange(const Call& call, bool have_cached, const void* payload,
                       std::size_t payload_bytes) {
    const int n = o_.size;
    const std::size_t p = exchanges_++ & 1;
    Header h{};
    h.magic = kMagic;
    h.call = call.record;
    h.call.flag = have_cached ? 1 : 0;
    std::memcpy(mine_[p].data(), &h, sizeof h);
    if (payload_bytes > 0) std::memcpy(mine_[p].data() + sizeof h, payload, payload_bytes);
    std::vector<char> received(static_cast<std::size_t>(n), 0);
    try {
      for (int q = 0; q < n; ++q) {
        if (q != o_.rank) {
          send_[p][static_cast<std::size_t>(q)]->send(0, sizeof(Header) + payload_bytes);
        }
      }
      for (int q = 0; q < n; ++q) {
        if (q == o_.rank) continue;
        recv_[p][static_cast<std::size_t>(q)]->waitRecv();
        received[static_cast<std::size_t>(q)] = 1;
      }
      for (int q = 0; q < n; ++q) {
        if (q != o_.rank) send_[p][static_cast<std::size_t>(q)]->waitSend();
      }
    } catch (const std::exception& e) {
      std::vector<int> silent;
      for (int q = 0; q < n; ++q) {
        if (q != o_.rank && !received[static_cast<std::size_t>(q)]) silent.push_back(q);
      }
      fail(call, e.what(), silent);
    }
    std::vector<std::string> differ;
    for (int q = 0; q < n; ++q) {
      if (q == o_.rank) continue;
      const Header theirs = header_of(p, q);
      if (theirs.magic != kMagic) {
        fail(call, process_name(q) + " sent a header that is not nubo's", {});
      }
      if (differ.size() == 4) continue;
      if (auto d = difference(call, theirs.call); !d.empty())
        differ.push_back(process_name(q) + " " + d);
    }
    if (!differ.empty()) {
      throw Error(Errc::invalid_argument,
                  "collective #" + std::to_string(call.seq()) +
                      " differs between the processes: " + process_name(o_.rank) +
                      " (this process) called " + call.name() + ", " + text::join(differ, ", ") +
                      "; every rank must make the same collective calls, with the same sizes "
                      "and types, in the same order");
    }
    return p;
  }

  // A small collective's result, from the data that came with the headers.
  void finish_small(const Step& a, std::size_t bytes, std::size_t p) {
    const int n = o_.size;
    switch (a.kind) {
      case StepKind::reduce: {
        std::vector<const void*> ins(static_cast<std::size_t>(n));
        for (int q = 0; q < n; ++q) {
          ins[static_cast<std::size_t>(q)] = q == o_.rank ? a.out : payload_of(p, q);
        }
        void* out = a.out;
        reduce_ranks(a.type, a.op, ins.data(), n, &out, 1, 0, a.count);
        return;
      }
      case StepKind::broadcast:
        if (a.root != o_.rank && bytes > 0) std::memcpy(a.out, payload_of(p, a.root), bytes);
        return;
      case StepKind::gather:
        for (int q = 0; q < n && bytes > 0; ++q) {
          std::memcpy(static_cast<unsigned char*>(a.out) + static_cast<std::size_t>(q) * bytes,
                      q == o_.rank ? a.in : payload_of(p, q), bytes);
        }
        return;
      case StepKind::exchange:
        for (int q = 0; q < n && bytes > 0; ++q) {
          const auto* from =
              q == o_.rank ? static_cast<const unsigned char*>(a.in) : payload_of(p, q);
          std::memcpy(static_cast<unsigned char*>(a.out) + static_cast<std::size_t>(q) * bytes,
                      from + static_cast<std::size_t>(o_.rank) * bytes, bytes);
        }
        return;
      case StepKind::barrier:
        return;
    }
  }

  void note(const char* kind, const std::string& message) {
    store_->set("fail/" + std::to_string(o_.rank),
                std::string(kind) + "\n" + message.substr(0, kMaxNote));
  }

  void close() {
    std::lock_guard<std::mutex> lock(close_mutex_);
    if (closed_) return;
    closed_ = true;
    ctx_->closeConnections();
  }

  // The collective failed in Gloo: close, leave a note, read the others', and throw an error
  // that says who is to blame. `silent` lists processes already known not to have answered.
  [[noreturn]] void fail(const Call& call, const std::string& gloo_what, std::vector<int> silent) {
    const std::string what = trimmed(gloo_what);
    const bool timed_out =
        what.find("Timed out") != std::string::npos || what.find("timed out") != std::string::npos;
    const std::string head =
        call.name() + " (collective #" + std::to_string(call.seq()) + ") failed: ";
    if (broken_.exchange(true)) {  // aborted meanwhile by this process: that is the cause
      close();
      std::lock_guard<std::mutex> lock(mutex_);
      throw Error(broken_code_, head + broken_why_);
    }
    close();
    try {
      note("victim", head + what);
    } catch (...) {  // the store is gone too; the message below still names what is known
    }
    // Read the others' notes until all have one or the grace period ends.
    std::vector<int> waiting;
    for (int q = 0; q < o_.size; ++q) {
      if (q != o_.rank) waiting.push_back(q);
    }
    std::vector<std::pair<int, std::string>> origins;
    const auto deadline = Clock::now() + std::min(kGrace, o_.timeout);
    for (;;) {
      std::vector<int> still;
      for (int q : waiting) {
        std::optional<std::string> v;
        try {
          v = store_->try_get("fail/" + std::to_string(q));
        } catch (...) {
        }
        if (!v) {
          still.push_back(q);
          continue;
        }
        if (v->rfind("origin\n", 0) == 0) origins.emplace_back(q, v->substr(7, kMaxNote));
      }
      waiting = std::move(still);
      if (waiting.empty() || Clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    Errc code = timed_out ? Errc::timeout : Errc::unavailable;
    std::string why;
    if (!origins.empty()) {
      code = Errc::cancelled;
      why = origins.front().second;  // "rank 3 failed: ...", from the process that gave up
    } else if (!waiting.empty()) {
      std::vector<std::string> names;
      for (int q : waiting) names.push_back(process_name(q));
      why = text::join(names, ", ") + (waiting.size() == 1 ? " is" : " are") +
            " gone: no word from " + (waiting.size() == 1 ? "it" : "them") + " within " +
            seconds_text(std::min(kGrace, o_.timeout)) + ", so it died or hangs outside nubo";
    } else if (!silent.empty()) {
      std::vector<std::string> names;
      for (int q : silent) names.push_back(process_name(q));
      why = text::join(names, ", ") + " did not join it within " + seconds_text(o_.timeout);
    } else {
      why = "the connection to the other processes broke";
    }
    why += " (Gloo: " + what + ")";
    {
      std::lock_guard<std::mutex> lock(mutex_);
      broken_code_ = code;
      broken_why_ = "an earlier collective failed: " + head + why;
    }
    throw Error(code, head + why);
  }

  std::shared_ptr<Store> store_;
  GlooLinkOptions o_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::rendezvous::Context> ctx_;
  // Header exchange: this process's message and the others', per parity of the exchange count;
  // each a header and up to small_limit_ bytes of data.
  std::uint64_t exchanges_ = 0;
  std::size_t small_limit_ = 0;
  std::vector<unsigned char> mine_[2];
  std::vector<std::vector<unsigned char>> theirs_[2];
  std::vector<std::unique_ptr<gloo::transport::Buffer>> send_[2], recv_[2];
  std::unique_ptr<gloo::BarrierAllToAll> barrier_;
  std::list<Cached> cache_;  // most recently used first
  std::atomic<bool> broken_{false};
  std::mutex mutex_;  // broken_code_, broken_why_
  Errc broken_code_ = Errc::unavailable;
  std::string broken_why_;
  std::mutex close_mutex_;
  bool closed_ = false;
};

}  // namespace

std::shared_ptr<Remote> connect_gloo(std::shared_ptr<Store> store, const GlooLinkOptions& options) {
  return std::make_shared<GlooLink>(std::move(store), options);
}

bool have_gloo() noexcept {
  return true;
}

}  // namespace nubo::parallel

#else  // !NUBO_HAVE_GLOO

namespace nubo::parallel {

std::shared_ptr<Remote> connect_gloo(std::shared_ptr<Store>, const GlooLinkOptions&) {
  throw Error(Errc::unsupported,
              "this build of nubo has no Gloo, so a team cannot span processes; install "
              "libgloo-dev and rebuild");
}

bool have_gloo() noexcept {
  return false;
}

}  // namespace nubo::parallel

#endif

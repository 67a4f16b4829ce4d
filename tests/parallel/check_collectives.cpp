#include "check_collectives.hpp"

#include <sstream>

#include "reference.hpp"

namespace nubo::test {
namespace {

constexpr ReduceOp kOps[] = {ReduceOp::sum, ReduceOp::avg, ReduceOp::max, ReduceOp::min};
// 0 and 1 are edge cases, 37 leaves a remainder for every team size, 4099 spans several of
// the reduction's 1024-element tiles.
constexpr std::size_t kCounts[] = {0, 1, 37, 4099};

// Spans several of the shared-memory link's 512 KiB chunks in every type, with a remainder.
constexpr std::size_t kLarge = 1'300'003;

struct Checker {
  Worker& w;
  bool exact;
  std::vector<int> groups;
  std::vector<std::string> problems;

  template <class T>
  void expect(const char* what, std::size_t count, ReduceOp op, bool async, std::size_t i, T got,
              T want, double scale) {
    const bool ok = exact ? same_bits(got, want) : close_enough(got, want, scale);
    if (ok || problems.size() >= 20) return;
    std::ostringstream s;
    s.precision(9);
    s << what << "(" << reduce_op_name(op) << ") " << count << " x " << dtype_name(dtype_of_v<T>)
      << (async ? " async" : "") << " on rank " << w.rank() << ": element " << i << " is "
      << as_double(got) << ", expected " << as_double(want);
    problems.push_back(s.str());
  }

  template <class T>
  std::vector<T> inputs(int rank, std::size_t count, int salt) {
    std::vector<T> v(count);
    for (std::size_t i = 0; i < count; ++i) v[i] = input_value<T>(rank, i, salt);
    return v;
  }

  // The reference of element i reduced over all ranks, and the magnitude for tolerances.
  template <class T>
  std::pair<T, double> reduced(ReduceOp op, std::size_t i, int salt) {
    std::vector<T> values(static_cast<std::size_t>(w.size()));
    double scale = 0;
    for (int r = 0; r < w.size(); ++r) {
      values[static_cast<std::size_t>(r)] = input_value<T>(r, i, salt);
      scale += std::abs(as_double(values[static_cast<std::size_t>(r)]));
    }
    return {reduce_grouped(op, values, groups), scale};
  }

  template <class T>
  void all_reduce(std::size_t count, ReduceOp op, bool async) {
    auto buf = w.alloc<T>(count);
    buf.write(inputs<T>(w.rank(), count, 1));
    if (async) {
      w.all_reduce_async(buf, op).wait();
    } else {
      w.all_reduce(buf, op);
    }
    auto got = buf.to_vector();
    for (std::size_t i = 0; i < count; ++i) {
      auto [want, scale] = reduced<T>(op, i, 1);
      expect("all_reduce", count, op, async, i, got[i], want, scale);
    }
  }

  template <class T>
  void broadcast(std::size_t count, bool async) {
    const int root = w.size() - 1;
    auto buf = w.alloc<T>(count);
    buf.write(inputs<T>(w.rank(), count, 2));
    if (async) {
      w.broadcast_async(buf, root).wait();
    } else {
      w.broadcast(buf, root);
    }
    auto got = buf.to_vector();
    for (std::size_t i = 0; i < count; ++i) {
      expect("broadcast", count, ReduceOp::sum, async, i, got[i], input_value<T>(root, i, 2), 0);
    }
  }

  template <class T>
  void all_gather(std::size_t count, bool async) {
    auto in = w.alloc<T>(count);
    auto out = w.alloc<T>(count * static_cast<std::size_t>(w.size()));
    in.write(inputs<T>(w.rank(), count, 3));
    if (async) {
      w.all_gather_async(in, out).wait();
    } else {
      w.all_gather(in, out);
    }
    auto got = out.to_vector();
    for (int r = 0; r < w.size(); ++r) {
      for (std::size_t i = 0; i < count; ++i) {
        expect("all_gather", count, ReduceOp::sum, async, i,
               got[static_cast<std::size_t>(r) * count + i], input_value<T>(r, i, 3), 0);
      }
    }
  }

  template <class T>
  void reduce_scatter(std::size_t count, ReduceOp op, bool async) {
    const std::size_t total = count * static_cast<std::size_t>(w.size());
    auto in = w.alloc<T>(total);
    auto out = w.alloc<T>(count);
    in.write(inputs<T>(w.rank(), total, 4));
    if (async) {
      w.reduce_scatter_async(in, out, op).wait();
    } else {
      w.reduce_scatter(in, out, op);
    }
    auto got = out.to_vector();
    const std::size_t base = static_cast<std::size_t>(w.rank()) * count;
    for (std::size_t i = 0; i < count; ++i) {
      auto [want, scale] = reduced<T>(op, base + i, 4);
      expect("reduce_scatter", count, op, async, i, got[i], want, scale);
    }
  }

  template <class T>
  void all_to_all(std::size_t count, bool async) {
    const std::size_t total = count * static_cast<std::size_t>(w.size());
    auto in = w.alloc<T>(total);
    auto out = w.alloc<T>(total);
    in.write(inputs<T>(w.rank(), total, 5));
    if (async) {
      w.all_to_all_async(in, out).wait();
    } else {
      w.all_to_all(in, out);
    }
    auto got = out.to_vector();
    const std::size_t mine = static_cast<std::size_t>(w.rank()) * count;
    for (int r = 0; r < w.size(); ++r) {
      for (std::size_t i = 0; i < count; ++i) {
        expect("all_to_all", count, ReduceOp::sum, async, i,
               got[static_cast<std::size_t>(r) * count + i], input_value<T>(r, mine + i, 5), 0);
      }
    }
  }

  template <class T>
  void all_for_type(bool large) {
    bool async = false;
    std::vector<std::size_t> counts(std::begin(kCounts), std::end(kCounts));
    if (large) counts.push_back(kLarge);
    for (std::size_t count : counts) {
      for (ReduceOp op : kOps) {
        all_reduce<T>(count, op, async);
        reduce_scatter<T>(count, op, !async);
        async = !async;
      }
      broadcast<T>(count, async);
      all_gather<T>(count, !async);
      all_to_all<T>(count, async);
    }
  }
};

}  // namespace

std::vector<std::string> check_all_collectives(Worker& w, const CheckOptions& o) {
  Checker c{w, o.exact, o.groups, {}};
  c.all_for_type<float>(o.large);
  c.all_for_type<half>(o.large);
  c.all_for_type<bfloat16>(o.large);
  c.all_for_type<std::int32_t>(o.large);
  c.all_for_type<std::int64_t>(o.large);
  w.barrier();
  w.barrier_async().wait();
  return c.problems;
}

}  // namespace nubo::test

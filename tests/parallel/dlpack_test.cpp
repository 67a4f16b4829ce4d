// DLPack in C++: a buffer exported and imported without a copy, the ownership rules (the
// deleter runs once, when the last user is gone; a refused tensor stays the caller's), and every
// tensor nubo must refuse with a clear error: strides, devices, dtypes, shapes.
#include <dlpack/dlpack.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <limits>

#include "nubo/error.hpp"
#include "nubo/parallel.hpp"
#include "rank_checks.hpp"
#include "workers.hpp"

using namespace nubo;
using nubo_test::host_workers;
using nubo_test::sim_workers;

namespace {

auto invalid(const std::string& says) {
  return Catch::Predicate<Error>(
      [says](const Error& e) {
        return e.code() == Errc::invalid_argument &&
               std::string(e.what()).find(says) != std::string::npos;
      },
      "invalid_argument saying \"" + says + "\"");
}

// A tensor over a host array, as NumPy would hand one out; counts its deleter's calls.
struct HostTensor {
  std::vector<float> data;
  std::vector<std::int64_t> shape, strides;
  DLManagedTensor managed{};
  int deleted = 0;

  HostTensor(const HostTensor&) = delete;  // the tensor points at this object
  explicit HostTensor(std::vector<std::int64_t> dims, std::vector<std::int64_t> str = {})
      : shape(std::move(dims)), strides(std::move(str)) {
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d > 0 ? d : 0);
    data.resize(n);
    for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<float>(i);
    DLTensor& t = managed.dl_tensor;
    t.data = data.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int>(shape.size());
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) {
      ++static_cast<HostTensor*>(self->manager_ctx)->deleted;
    };
  }
};

}  // namespace

TEST_CASE("a buffer goes to DLPack and back without a copy", "[parallel][dlpack]") {
  Team team(sim_workers(1));
  team.run([](Worker& w) {
    auto buf = w.alloc<bfloat16>(10);
    w.fill(buf, 2.0);
    const std::size_t in_use = w.bytes_in_use();
    DLManagedTensor* t = buf.to_dlpack();
    REQUIRE(t != nullptr);
    CHECK(t->dl_tensor.data == buf.data());
    CHECK(t->dl_tensor.device.device_type == kDLCPU);  // sim memory is host memory
    CHECK(t->dl_tensor.ndim == 1);
    CHECK(t->dl_tensor.shape[0] == 10);
    CHECK(t->dl_tensor.strides == nullptr);
    CHECK(t->dl_tensor.dtype.code == kDLBfloat);
    CHECK(t->dl_tensor.dtype.bits == 16);
    auto back = w.from_dlpack(t);  // the buffer now owns the tensor
    CHECK(back.data() == buf.data());
    CHECK(back.dtype() == DType::bf16);
    CHECK(back.size() == 10);
    CHECK(w.bytes_in_use() == in_use);
    // The export shares the memory: it outlives the buffer it came from.
    buf = Buffer<bfloat16>();
    CHECK(w.bytes_in_use() == in_use);
    w.scale(back, 2.0f);
    std::vector<bfloat16> out(10);
    back.read(out.data(), 20);
    CHECK(out == std::vector<bfloat16>(10, bfloat16(4.0f)));
    back = DeviceBuffer();
    CHECK(w.bytes_in_use() < in_use);  // the last user gone: nubo freed it
  });
}

TEST_CASE("an imported tensor is used in place and handed back once", "[parallel][dlpack]") {
  Team team(host_workers(2));
  std::vector<std::unique_ptr<HostTensor>> tensors;
  tensors.push_back(std::make_unique<HostTensor>(std::vector<std::int64_t>{2, 3}));
  tensors.push_back(std::make_unique<HostTensor>(std::vector<std::int64_t>{2, 3}));
  nubo_test::RankChecks checks;
  team.run([&](Worker& w) {
    HostTensor& t = *tensors[static_cast<std::size_t>(w.rank())];
    {
      auto buf = w.from_dlpack(&t.managed);
      RANK_EXPECT(checks, w, buf.size() == 6);
      auto view = buf.slice(1, 4);
      buf = DeviceBuffer();
      RANK_EXPECT(checks, w, t.deleted == 0);  // the slice still uses it
      w.all_reduce(view, ReduceOp::sum);
    }
    RANK_EXPECT(checks, w, t.deleted == 1);
  });
  checks.report();
  CHECK(tensors[0]->data == std::vector<float>{0, 2, 4, 6, 8, 5});
  CHECK(tensors[1]->data == tensors[0]->data);
}

TEST_CASE("compact strides, unit dimensions, scalars and byte offsets are accepted",
          "[parallel][dlpack]") {
  Team team(host_workers(1));
  team.run([](Worker& w) {
    HostTensor compact({2, 3}, {3, 1});
    CHECK(w.from_dlpack(&compact.managed).size() == 6);
    HostTensor unit({4, 1}, {1, 7});  // a size-1 dimension may have any stride (PyTorch does)
    CHECK(w.from_dlpack(&unit.managed).size() == 4);
    HostTensor scalar({});
    CHECK(w.from_dlpack(&scalar.managed).size() == 1);
    HostTensor offset({4});
    offset.managed.dl_tensor.byte_offset = 8;
    offset.shape[0] = 2;
    auto b = w.from_dlpack(&offset.managed);
    std::vector<float> v(2);
    b.read(v.data(), 8);
    CHECK(v == std::vector<float>{2, 3});
    HostTensor empty({0});
    empty.managed.dl_tensor.data = nullptr;  // PyTorch's empty tensors have no data
    auto e = w.from_dlpack(&empty.managed);
    CHECK(e.size() == 0);
    w.all_reduce(e);
  });
}

TEST_CASE("tensors nubo cannot use are refused, and stay the caller's", "[parallel][dlpack]") {
  Team team(host_workers(1));
  team.run([](Worker& w) {
    auto refused = [&](HostTensor& t, const std::string& says) {
      CHECK_THROWS_MATCHES(w.from_dlpack(&t.managed), Error, invalid(says));
      CHECK(t.deleted == 0);
    };
    HostTensor transposed({2, 3}, {1, 2});
    refused(transposed, "not compact row-major (dimension 1 has stride 2, not 1)");
    HostTensor on_gpu({4});
    on_gpu.managed.dl_tensor.device = {kDLCUDA, 0};
    refused(on_gpu, "lives on CUDA device 0 memory, but cpu works on host memory");
    HostTensor f64({4});
    f64.managed.dl_tensor.dtype = {kDLFloat, 64, 1};
    refused(f64, "dtype float64 has no nubo type");
    HostTensor vector4({4});
    vector4.managed.dl_tensor.dtype = {kDLFloat, 32, 4};
    refused(vector4, "dtype float32x4");
    HostTensor bytes({4});
    bytes.managed.dl_tensor.dtype = {kDLUInt, 8, 1};
    refused(bytes, "dtype uint8");
    HostTensor negative({-2});
    refused(negative, "dimension 0 has negative size");
    HostTensor bad_ndim({4});
    bad_ndim.managed.dl_tensor.ndim = -1;
    refused(bad_ndim, "ndim is negative");
    HostTensor no_shape({4});
    no_shape.managed.dl_tensor.shape = nullptr;
    refused(no_shape, "shape is null");
    HostTensor no_data({4});
    no_data.managed.dl_tensor.data = nullptr;
    refused(no_data, "data pointer is null");
    HostTensor huge({1});
    huge.shape = {std::int64_t{1} << 40, std::int64_t{1} << 40};
    huge.managed.dl_tensor.shape = huge.shape.data();
    huge.managed.dl_tensor.ndim = 2;
    refused(huge, "element count overflows");
    HostTensor too_many_bytes({1});
    too_many_bytes.shape = {std::int64_t{1} << 62};
    too_many_bytes.managed.dl_tensor.shape = too_many_bytes.shape.data();
    refused(too_many_bytes, "size in bytes overflows");
    CHECK_THROWS_MATCHES(w.from_dlpack(nullptr), Error, invalid("the tensor is null"));
  });
}

TEST_CASE("a moved-from buffer cannot be exported", "[parallel][dlpack]") {
  Team team(host_workers(1));
  team.run([](Worker& w) {
    auto b = w.alloc<float>(4);
    auto keep = std::move(b);
    CHECK_THROWS_MATCHES(b.to_dlpack(), Error, invalid("empty (moved from)"));
    DLManagedTensor* t = keep.to_dlpack();
    t->deleter(t);  // a consumer that is done with it at once
  });
}

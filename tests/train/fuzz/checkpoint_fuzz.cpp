// The checkpoint reader under attack: a checkpoint whose meta.json is arbitrary text, its
// tensors those of a real one. DataParallelTrainer::load either restores it or throws
// nubo::Error, and a trainer it refused is left as it was: its parameters and step unchanged.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "helpers.hpp"
#include "nubo/error.hpp"
#include "nubo/transfer.hpp"

namespace {

namespace fs = std::filesystem;

// A trainer of a small model, and the files of one of its checkpoints, made once.
struct Fixture {
  fs::path dir = train_test::temp_dir("fuzz-checkpoint");
  std::shared_ptr<nubo::InMemoryDataset> data = train_test::synthetic(128);
  nubo::Team team = train_test::cpu_team(1);
  std::unique_ptr<nubo::DataParallelTrainer> trainer;
  std::vector<std::string> tensors;  // the checkpoint's files but meta.json
  Fixture() {
    auto o = train_test::small_options();
    trainer = std::make_unique<nubo::DataParallelTrainer>(team, o, data);
    trainer->fit(1);
    const auto ckpt = (dir / "made.nubo").string();
    trainer->save(ckpt);
    nubo::transfer::unpack(ckpt, (dir / "files").string(), {.sync = false});
    for (const auto& e : fs::directory_iterator(dir / "files"))
      if (e.path().filename() != "meta.json") tensors.push_back(e.path().string());
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture f;
  const auto meta = f.dir / "meta" / "meta.json";
  fs::create_directories(meta.parent_path());
  std::ofstream(meta, std::ios::binary)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  auto files = f.tensors;
  files.push_back(meta.string());
  const auto ckpt = (f.dir / "fuzzed.nubo").string();
  nubo::transfer::pack(files, ckpt, {.threads = 1, .sync = false});
  const auto before = f.trainer->parameters();
  const auto step = f.trainer->steps_done();
  try {
    f.trainer->load(ckpt);
  } catch (const nubo::Error&) {
    if (f.trainer->parameters() != before || f.trainer->steps_done() != step)
      __builtin_trap();  // refused, yet changed
  }
  return 0;
}

// nubo_train.h over nubo::DataParallelTrainer.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "generated/results.hpp"
#include "guard.hpp"
#include "nubo.h"
#include "nubo/dataset.hpp"
#include "nubo/device.hpp"
#include "nubo/parallel.hpp"
#include "nubo/train.hpp"
#include "parallel_handles.hpp"
#include "sized_struct.hpp"
#include "text_out.hpp"

namespace nubo::capi {
namespace {

struct TrainerHandle {
  std::unique_ptr<nubo::Team> owned_team;  // declared before the trainer, destroyed after it
  std::shared_ptr<nubo::InMemoryDataset> train;
  std::shared_ptr<nubo::InMemoryDataset> test;  // loaded by the first evaluate
  std::string dataset_dir;
  std::size_t subset = 0;
  int epochs = 10;
  std::unique_ptr<nubo::DataParallelTrainer> trainer;
};

nubo_trainer* to_handle(TrainerHandle* t) {
  return reinterpret_cast<nubo_trainer*>(t);
}
TrainerHandle& require_trainer(nubo_trainer* t) {
  return *reinterpret_cast<TrainerHandle*>(require(t, "trainer"));
}
const TrainerHandle& require_trainer(const nubo_trainer* t) {
  return *reinterpret_cast<const TrainerHandle*>(require(t, "trainer"));
}

nubo_train_options defaults() {
  nubo_train_options o{};
  o.struct_size = sizeof o;
  o.optimizer = NUBO_TRAIN_SGD;
  o.lr = 0.05;
  o.momentum = 0.9;
  o.batch = 128;
  o.epochs = 10;
  o.seed = 1;
  o.bucket_bytes = nubo::kDefaultBucketBytes;
  o.precision = NUBO_DTYPE_F32;
  o.grad_compression = NUBO_DTYPE_F32;
  o.accumulate = 1;
  return o;
}

}  // namespace
}  // namespace nubo::capi

using namespace nubo::capi;
using nubo::Errc;
using nubo::Error;

extern "C" {

NUBO_C_API nubo_status nubo_train_options_init(nubo_train_options* options, size_t struct_size) {
  return guard("nubo_train_options_init", [&] {
    init_sized(defaults(), require(options, "options"), struct_size, "nubo_train_options");
  });
}

NUBO_C_API nubo_status nubo_trainer_create(const nubo_train_options* options, nubo_trainer** out) {
  return guard("nubo_trainer_create", [&] {
    require(out, "out");
    *out = nullptr;
    const nubo_train_options o =
        options == nullptr ? defaults()
                           : read_sized(*options, defaults(), "options", "nubo_train_options_init");
    // Read the enum's bytes: a value outside the enumerators must not be loaded as the enum.
    int optimizer = 0;
    std::memcpy(&optimizer, &o.optimizer, sizeof optimizer);
    if (optimizer != NUBO_TRAIN_SGD && optimizer != NUBO_TRAIN_ADAM)
      throw Error(Errc::invalid_argument, "options->optimizer is " + std::to_string(optimizer) +
                                              ": use NUBO_TRAIN_SGD or NUBO_TRAIN_ADAM");
    if (o.layers == nullptr && o.layer_count != 0)
      throw Error(Errc::invalid_argument, "options->layers is NULL but options->layer_count is " +
                                              std::to_string(o.layer_count));
    if (o.epochs < 0)
      throw Error(Errc::invalid_argument,
                  "options->epochs is " + std::to_string(o.epochs) + ": use 0 or more");
    if (!std::isfinite(o.lr) || o.lr <= 0)
      throw Error(Errc::invalid_argument, "options->lr must be a positive number");
    if (!std::isfinite(o.momentum) || o.momentum < 0 || o.momentum >= 1)
      throw Error(Errc::invalid_argument, "options->momentum must lie in [0, 1)");

    auto h = std::make_unique<TrainerHandle>();
    h->dataset_dir = o.dataset_dir != nullptr ? o.dataset_dir : nubo::kFashionMnistDir;
    h->subset = o.subset;
    h->epochs = o.epochs;
    h->train = nubo::load_fashion_mnist("train", h->dataset_dir);
    if (h->subset != 0) h->train = h->train->head(h->subset);

    nubo::TrainerOptions t;
    if (o.layer_count == 0)
      t.layers = {h->train->features(), 256, 128, h->train->classes()};
    else
      t.layers.assign(o.layers, o.layers + o.layer_count);
    t.optimizer = optimizer == NUBO_TRAIN_ADAM ? nubo::Optimizer::adam : nubo::Optimizer::sgd;
    t.lr = static_cast<float>(o.lr);
    t.momentum = static_cast<float>(o.momentum);
    t.global_batch = o.batch;
    t.seed = o.seed;
    t.bucket_bytes = o.bucket_bytes;
    t.autotune = o.autotune != 0;
    if (o.checkpoint_dir != nullptr) t.checkpoint_dir = o.checkpoint_dir;
    t.checkpoint_every = o.checkpoint_every;
    t.strict_resume = o.strict_resume != 0;
    t.async_checkpoints = o.sync_checkpoints == 0;
    t.checkpoint_auto = o.checkpoint_auto != 0;
    t.mtbi_s = o.mtbi_s;
    t.fresh = o.fresh != 0;
    t.zero_stage = o.zero_stage;
    t.precision = to_dtype(o.precision);
    t.grad_compression = to_dtype(o.grad_compression);
    t.error_feedback = o.error_feedback != 0;
    t.accumulate = o.accumulate;
    t.max_grad_norm = static_cast<float>(o.max_grad_norm);

    nubo::Team* team = nullptr;
    if (o.team != nullptr) {
      team = &require_team(o.team).team;
    } else {
      h->owned_team = std::make_unique<nubo::Team>(nubo::Team::from_env(
          nubo::devices_from_spec(o.devices != nullptr ? o.devices : "cpu", "options->devices")));
      team = h->owned_team.get();
    }
    h->trainer = std::make_unique<nubo::DataParallelTrainer>(*team, t, h->train);
    *out = to_handle(h.release());
  });
}

NUBO_C_API void nubo_trainer_free(nubo_trainer* trainer) {
  delete reinterpret_cast<TrainerHandle*>(trainer);
}

NUBO_C_API nubo_status nubo_trainer_fit(nubo_trainer* trainer,
                                        nubo_train_progress_callback progress, void* user) {
  return guard("nubo_trainer_fit", [&] {
    TrainerHandle& h = require_trainer(trainer);
    nubo::TrainProgressFn fn;
    if (progress != nullptr) {
      fn = [progress, user](const nubo::TrainProgress& p) {
        const nubo_train_progress c = to_nubo_train_progress(p);
        return progress(&c, user) != 0;
      };
    }
    if (h.trainer->fit(h.epochs, fn) == nubo::FitResult::stopped) {
      throw Error(Errc::cancelled,
                  "training stopped (the progress callback, or a stop request) "
                  "after step " +
                      std::to_string(h.trainer->steps_done()) +
                      ": call nubo_trainer_fit again to continue");
    }
  });
}

NUBO_C_API nubo_status nubo_trainer_evaluate(nubo_trainer* trainer,
                                             nubo_train_evaluation_info* out) {
  return guard("nubo_trainer_evaluate", [&] {
    TrainerHandle& h = require_trainer(trainer);
    require(out, "out");
    check_out_size(out, "out", "nubo_train_evaluation_info");
    if (!h.test) {
      auto test = nubo::load_fashion_mnist("test", h.dataset_dir);
      h.test = h.subset != 0 ? test->head(h.subset) : test;
    }
    write_sized(to_nubo_train_evaluation_info(h.trainer->evaluate(*h.test)), out, "out",
                "nubo_train_evaluation_info");
  });
}

NUBO_C_API nubo_status nubo_trainer_save(nubo_trainer* trainer, const char* path) {
  return guard("nubo_trainer_save", [&] {
    TrainerHandle& h = require_trainer(trainer);
    h.trainer->save(require(path, "path"));
  });
}

NUBO_C_API nubo_status nubo_trainer_load(nubo_trainer* trainer, const char* path) {
  return guard("nubo_trainer_load", [&] {
    TrainerHandle& h = require_trainer(trainer);
    h.trainer->load(require(path, "path"));
  });
}

NUBO_C_API uint64_t nubo_trainer_steps_done(const nubo_trainer* trainer) {
  if (trainer == nullptr) return 0;
  return reinterpret_cast<const TrainerHandle*>(trainer)->trainer->steps_done();
}

NUBO_C_API void nubo_trainer_request_stop(nubo_trainer* trainer) {
  auto* h = reinterpret_cast<TrainerHandle*>(trainer);
  if (h != nullptr && h->trainer) h->trainer->request_stop();
}

NUBO_C_API nubo_status nubo_trainer_resumed_from(const nubo_trainer* trainer, char* buf,
                                                 size_t capacity, size_t* needed) {
  return guard("nubo_trainer_resumed_from", [&] {
    const TrainerHandle& h = require_trainer(trainer);
    nubo::capi::copy_text_out(h.trainer->resumed_from(), "the path", buf, capacity, needed);
  });
}

NUBO_C_API nubo_status nubo_trainer_profile_json(const nubo_trainer* trainer, char* buf,
                                                 size_t capacity, size_t* needed) {
  return guard("nubo_trainer_profile_json", [&] {
    const TrainerHandle& h = require_trainer(trainer);
    nubo::capi::copy_text_out(nubo::profile_json(h.trainer->profile()), "the JSON", buf, capacity,
                              needed);
  });
}

}  // extern "C"

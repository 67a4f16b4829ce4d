/* nubo_train.h from strict C11: a small run on two workers (1 epoch of a subset), progress,
 * evaluate, the profile's needed-size protocol, save and load, cancellation, bad arguments. */
#include <nubo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                           \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond, \
              nubo_last_error());                                                             \
      ++failures;                                                                             \
    }                                                                                         \
  } while (0)

typedef struct counter {
  int calls;
  int stop_at; /* 0: never */
  double last_loss;
} counter;

static int on_progress(const nubo_train_progress* p, void* user) {
  counter* c = (counter*)user;
  ++c->calls;
  c->last_loss = p->loss;
  if (p->struct_size < sizeof *p || p->steps_per_epoch == 0) return 0;
  return c->stop_at == 0 || c->calls < c->stop_at;
}

static void options(nubo_train_options* o, const size_t* layers) {
  CHECK(nubo_train_options_init(o, sizeof *o) == NUBO_OK);
  o->layers = layers;
  o->layer_count = 3;
  o->devices = "cpu:2";
  o->epochs = 1;
  o->batch = 64;
  o->subset = 512;
  o->bucket_bytes = 16 << 10;
  const char* dir = getenv("NUBO_TEST_DATASET_DIR");
  if (dir != NULL) o->dataset_dir = dir;
}

int main(int argc, char** argv) {
  const char* work = argc > 1 ? argv[1] : ".";
  const size_t layers[3] = {784, 32, 10};
  nubo_train_options o;
  nubo_trainer* t = NULL;
  char path[1024];

  /* Defaults and bad arguments. */
  CHECK(nubo_train_options_init(NULL, sizeof o) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_train_options_init(&o, 0) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_train_options_init(&o, sizeof o) == NUBO_OK);
  CHECK(o.struct_size == sizeof o && o.batch == 128 && o.epochs == 10 && o.lr > 0.049 &&
        o.optimizer == NUBO_TRAIN_SGD && o.bucket_bytes == 25u << 20 && o.team == NULL);
  CHECK(nubo_trainer_create(&o, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "out is NULL") != NULL);
  o.struct_size = 0;
  t = (nubo_trainer*)&o; /* must be reset to NULL on failure */
  CHECK(nubo_trainer_create(&o, &t) == NUBO_ERR_INVALID_ARGUMENT && t == NULL);
  CHECK(strstr(nubo_last_error(), "struct_size") != NULL);

  options(&o, layers);
  o.devices = "gpu:9";
  CHECK(nubo_trainer_create(&o, &t) == NUBO_ERR_INVALID_ARGUMENT && t == NULL);
  CHECK(strstr(nubo_last_error(), "options->devices") != NULL);
  options(&o, layers);
  o.optimizer = (nubo_train_optimizer)7;
  CHECK(nubo_trainer_create(&o, &t) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(strstr(nubo_last_error(), "optimizer") != NULL);
  options(&o, layers);
  o.dataset_dir = "/nonexistent/fashion-mnist";
  CHECK(nubo_trainer_create(&o, &t) == NUBO_ERR_NOT_FOUND && t == NULL);
  {
    const size_t wrong[3] = {100, 32, 10}; /* the data has 784 features */
    options(&o, wrong);
    CHECK(nubo_trainer_create(&o, &t) == NUBO_ERR_INVALID_ARGUMENT && t == NULL);
  }
  CHECK(nubo_trainer_fit(NULL, NULL, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_trainer_save(NULL, "x") == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_trainer_load(NULL, "x") == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_trainer_profile_json(NULL, NULL, 0, NULL) == NUBO_ERR_INVALID_ARGUMENT);
  CHECK(nubo_trainer_steps_done(NULL) == 0);
  nubo_trainer_free(NULL);

  /* A run: 512 rows / 64 = 8 steps on two workers. */
  options(&o, layers);
  if (nubo_trainer_create(&o, &t) != NUBO_OK) {
    fprintf(stderr, "create: %s\n", nubo_last_error());
    return 1;
  }
  {
    counter c = {0, 0, 0.0};
    nubo_train_evaluation_info e;
    size_t needed = 0;
    char small[4];
    char* json;
    CHECK(nubo_trainer_fit(t, on_progress, &c) == NUBO_OK);
    CHECK(c.calls == 8 && c.last_loss > 0);
    CHECK(nubo_trainer_steps_done(t) == 8);

    CHECK(nubo_trainer_evaluate(t, NULL) == NUBO_ERR_INVALID_ARGUMENT);
    e.struct_size = 0;
    CHECK(nubo_trainer_evaluate(t, &e) == NUBO_ERR_INVALID_ARGUMENT);
    e.struct_size = sizeof e;
    CHECK(nubo_trainer_evaluate(t, &e) == NUBO_OK);
    CHECK(e.samples == 512 && e.accuracy > 0.2 && e.accuracy <= 1 && e.loss > 0);

    CHECK(nubo_trainer_profile_json(t, NULL, 0, &needed) == NUBO_ERR_INVALID_ARGUMENT);
    CHECK(needed > 10);
    CHECK(nubo_trainer_profile_json(t, small, sizeof small, &needed) == NUBO_ERR_INVALID_ARGUMENT);
    CHECK(small[0] == '\0');
    json = (char*)malloc(needed);
    CHECK(json != NULL && nubo_trainer_profile_json(t, json, needed, NULL) == NUBO_OK);
    if (json != NULL) {
      CHECK(strlen(json) + 1 == needed && strstr(json, "samples_per_s") != NULL);
      free(json);
    }

    snprintf(path, sizeof path, "%s/c-test.nubo", work);
    CHECK(nubo_trainer_save(t, NULL) == NUBO_ERR_INVALID_ARGUMENT);
    CHECK(nubo_trainer_save(t, path) == NUBO_OK);
  }
  nubo_trainer_free(t);
  t = NULL;

  /* Load into a fresh trainer; then cancel a second epoch from the callback. */
  options(&o, layers);
  o.epochs = 2;
  CHECK(nubo_trainer_create(&o, &t) == NUBO_OK);
  if (t != NULL) {
    counter c = {0, 3, 0.0};
    CHECK(nubo_trainer_load(t, "/nonexistent/ckpt.nubo") != NUBO_OK);
    CHECK(nubo_trainer_load(t, path) == NUBO_OK);
    CHECK(nubo_trainer_steps_done(t) == 8);
    CHECK(nubo_trainer_fit(t, on_progress, &c) == NUBO_ERR_CANCELLED);
    CHECK(strstr(nubo_last_error(), "nubo_trainer_fit") != NULL);
    CHECK(c.calls == 3 && nubo_trainer_steps_done(t) == 11);
    c.stop_at = 0; /* continues to the end of epoch 2 */
    CHECK(nubo_trainer_fit(t, on_progress, &c) == NUBO_OK);
    CHECK(nubo_trainer_steps_done(t) == 16);
    nubo_trainer_free(t);
  }
  {
    /* A checkpoint of another model. */
    const size_t other[3] = {784, 16, 10};
    options(&o, other);
    CHECK(nubo_trainer_create(&o, &t) == NUBO_OK);
    CHECK(nubo_trainer_load(t, path) == NUBO_ERR_INVALID_ARGUMENT);
    nubo_trainer_free(t);
  }
  remove(path);
  {
    /* With a checkpoint directory: fit writes there; a new trainer on it continues from the
       newest checkpoint (its path from nubo_trainer_resumed_from) unless fresh. */
    char dir[1024], from[1100];
    size_t needed = 0;
    snprintf(dir, sizeof dir, "%s/c-ckpt", work);
    options(&o, layers);
    o.checkpoint_dir = dir;
    o.fresh = 1;
    CHECK(nubo_trainer_create(&o, &t) == NUBO_OK);
    if (t != NULL) {
      CHECK(nubo_trainer_fit(t, NULL, NULL) == NUBO_OK);
      CHECK(nubo_trainer_resumed_from(t, from, sizeof from, &needed) == NUBO_OK && from[0] == 0);
      nubo_trainer_free(t);
    }
    o.fresh = 0;
    o.epochs = 2;
    CHECK(nubo_trainer_create(&o, &t) == NUBO_OK);
    if (t != NULL) {
      CHECK(nubo_trainer_steps_done(t) == 8);
      CHECK(nubo_trainer_resumed_from(t, NULL, 0, &needed) == NUBO_ERR_INVALID_ARGUMENT);
      CHECK(nubo_trainer_resumed_from(t, from, sizeof from, &needed) == NUBO_OK &&
            strstr(from, "/c-ckpt/ckpt-0000000008.nubo") != NULL && strlen(from) + 1 == needed);
      nubo_trainer_free(t);
    }
  }

  if (failures != 0) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("nubo_train C API: ok\n");
  return 0;
}

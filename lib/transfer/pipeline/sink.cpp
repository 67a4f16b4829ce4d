#include "transfer/pipeline/sink.hpp"

#include "nubo/error.hpp"
#include "transfer/pipeline/pipeline.hpp"

namespace nubo::transfer {

void run_transfer(const WalkResult& walk, Sink& sink, std::uint32_t chunk_size,
                  const Encoding& encoding) {
  const auto plans = sink.plan(walk);
  ChunkSource source(plans, chunk_size, sink.source_options(), encoding.read_meter);
  PipelineStages<SourceJob> stages;
  stages.produce = [&](SourceJob& job) { return source(job); };
  stages.work = [&](SourceJob& job) {
    encode(job, encoding.codec, encoding.level, encoding.auto_codec);
  };
  stages.consume = [&](SourceJob& job) { sink.put(job); };
  try {
    run_pipeline(encoding.resources.slots, encoding.resources.workers, stages);
  } catch (const Error& e) {
    sink.abort(e.code() == Errc::cancelled);
    throw;
  } catch (...) {
    sink.abort(false);
    throw;
  }
  sink.finish();
}

}  // namespace nubo::transfer

#include "engine/cosyvoice/vocoder_pool.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <vector>

#include "core/error.h"

namespace voxserve::engine::cosyvoice {
namespace {

// Requests share an estimator call at one length T, or one length bucket
// (FlowMatcher::ShareKey): for a whole piece T is FlowMatcher::PieceFrames, for a hop
// FlowMatcher::HopFrames. Pieces and hops never share a batch (they run through different calls).
std::pair<bool, int> Length(const FlowMatcher& flow, const FlowJob& job) {
  if (job.hop) {
    return {true,
            flow.ShareKey(flow.HopFrames({job.request, job.hop->token_offset, job.hop->finalize}))};
  }
  return {false, flow.ShareKey(flow.PieceFrames(job.request))};
}

}  // namespace

struct VocoderPool::Impl {
  explicit Impl(int threads) : pool(static_cast<size_t>(threads)) {}
  boost::asio::thread_pool pool;
};

absl::StatusOr<std::unique_ptr<VocoderPool>> VocoderPool::Create(int threads,
                                                                 const FlowMatcher* flow) {
  if (threads < 1 || threads > 64) {
    return core::InvalidArgument("cosyvoice option vocoder_threads = " + std::to_string(threads) +
                                 " must be a whole number in 1..64");
  }
  return std::unique_ptr<VocoderPool>(
      new VocoderPool(threads, flow, std::make_unique<Impl>(threads)));
}

VocoderPool::VocoderPool(int threads, const FlowMatcher* flow, std::unique_ptr<Impl> impl)
    : threads_(threads), flow_(flow), impl_(std::move(impl)) {}

VocoderPool::~VocoderPool() {
  // stop() leaves the jobs not started unrun (their runners are gone or going: nothing would
  // read their audio); join() waits for those running, which read the engine's stages.
  impl_->pool.stop();
  impl_->pool.join();
}

void VocoderPool::Post(std::function<void()> job, JobPriority priority) {
  {
    std::lock_guard lock(mutex_);
    waiting_.push_back(Waiting{priority, next_order_++, std::move(job)});
  }
  // One task per job; each runs whichever waiting job goes first by then.
  boost::asio::post(impl_->pool, [this] { RunNext(); });
}

bool VocoderPool::batches_flows() const {
  return flow_ != nullptr && flow_->estimator_batch() == 0;
}

void VocoderPool::PostFlow(FlowJob job) {
  {
    std::lock_guard lock(mutex_);
    const JobPriority priority = job.priority;
    waiting_.push_back(Waiting{priority, next_order_++, std::move(job)});
  }
  // A task finding the queue empty had its job taken into an earlier batch.
  boost::asio::post(impl_->pool, [this] { RunNext(); });
}

VocoderPool::Waiting VocoderPool::TakeFirst() {
  auto goes_before = [](const Waiting& a, const Waiting& b) {
    if (a.priority.first_chunk != b.priority.first_chunk) return a.priority.first_chunk;
    if (!a.priority.first_chunk && a.priority.runs_dry != b.priority.runs_dry) {
      return a.priority.runs_dry < b.priority.runs_dry;
    }
    return a.order < b.order;
  };
  auto first = std::min_element(waiting_.begin(), waiting_.end(), goes_before);
  Waiting taken = std::move(*first);
  waiting_.erase(first);
  return taken;
}

void VocoderPool::RunNext() {
  Waiting next;
  {
    std::lock_guard lock(mutex_);
    if (waiting_.empty()) return;
    next = TakeFirst();
  }
  if (auto* plain = std::get_if<std::function<void()>>(&next.job)) return (*plain)();
  RunFlows(std::get<FlowJob>(std::move(next.job)));
}

void VocoderPool::RunFlows(FlowJob first) {
  std::vector<FlowJob> batch;
  batch.push_back(std::move(first));
  if (batch.front().before) batch.front().before();
  if (batches_flows()) {
    // Whoever waits by now (also while the first job's hook ran) joins, at its length.
    std::lock_guard lock(mutex_);
    const auto length = Length(*flow_, batch.front());  // batches_flows: flow_ is set
    for (auto it = waiting_.begin(); it != waiting_.end() && batch.size() < kMaxFlowBatch;) {
      auto* flow = std::get_if<FlowJob>(&it->job);
      if (flow == nullptr || Length(*flow_, *flow) != length) {
        ++it;
        continue;
      }
      batch.push_back(std::move(*flow));
      it = waiting_.erase(it);
    }
  }
  std::vector<FlowJob*> live;
  std::vector<FlowRequest> requests;
  for (size_t k = 0; k < batch.size(); ++k) {
    FlowJob& job = batch[k];
    if (k > 0 && job.before) job.before();
    if (job.dropped && job.dropped()) {
      if (job.skip) job.skip();
      continue;
    }
    live.push_back(&job);
    requests.push_back(job.request);
  }
  if (live.empty()) return;
  for (FlowJob* job : live) {
    if (job->batched) job->batched(live.size());
  }
  if (flow_ == nullptr) {
    for (FlowJob* job : live) {
      if (job->hop) {
        job->finish_hop(core::Internal("this vocoder pool has no flow"));
      } else {
        job->finish(core::Internal("this vocoder pool has no flow"));
      }
    }
    return;
  }
  if (live.front()->hop) {
    std::vector<FlowMatcher::Hop> hops;
    for (const FlowJob* job : live) {
      hops.push_back({job->request, job->hop->token_offset, job->hop->finalize});
    }
    std::vector<absl::StatusOr<FlowMel>> mels = flow_->RunPrefixBatch(hops);
    std::vector<HiftPush> pushes;
    std::vector<FlowJob*> pushed;
    for (size_t k = 0; k < live.size(); ++k) {
      if (!mels[k].ok()) {
        live[k]->finish_hop(mels[k].status());
        continue;
      }
      if (live[k]->causal_hift != nullptr) {
        live[k]->finish_hop(
            live[k]->causal_hift->Push({mels[k]->values, mels[k]->frames}, live[k]->hop->finalize));
        continue;
      }
      pushes.push_back({live[k]->hift,
                        {mels[k]->values, mels[k]->frames},
                        live[k]->hop->finalize,
                        live[k]->noise});
      pushed.push_back(live[k]);
    }
    std::vector<absl::StatusOr<std::vector<float>>> audio = HiftStream::PushBatch(pushes);
    for (size_t k = 0; k < pushed.size(); ++k) pushed[k]->finish_hop(std::move(audio[k]));
    return;
  }
  std::vector<absl::StatusOr<ProviderMel>> mels = flow_->RunBatchOnProvider(requests);
  for (size_t k = 0; k < live.size(); ++k) live[k]->finish(std::move(mels[k]));
}

}  // namespace voxserve::engine::cosyvoice

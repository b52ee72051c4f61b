#include "engine/cosyvoice/vocoder_pool.h"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "core/error.h"

namespace voxserve::engine::cosyvoice {

struct VocoderPool::Impl {
  explicit Impl(int threads) : pool(static_cast<size_t>(threads)) {}
  boost::asio::thread_pool pool;
};

absl::StatusOr<std::unique_ptr<VocoderPool>> VocoderPool::Create(int threads) {
  if (threads < 1 || threads > 64) {
    return core::InvalidArgument("cosyvoice option vocoder_threads = " + std::to_string(threads) +
                                 " must be a whole number in 1..64");
  }
  return std::unique_ptr<VocoderPool>(new VocoderPool(threads, std::make_unique<Impl>(threads)));
}

VocoderPool::VocoderPool(int threads, std::unique_ptr<Impl> impl)
    : threads_(threads), impl_(std::move(impl)) {}

VocoderPool::~VocoderPool() {
  // stop() leaves the jobs not started unrun (their runners are gone or going: nothing would
  // read their audio); join() waits for those running, which read the engine's stages.
  impl_->pool.stop();
  impl_->pool.join();
}

void VocoderPool::Post(std::function<void()> job) {
  boost::asio::post(impl_->pool, std::move(job));
}

}  // namespace voxserve::engine::cosyvoice

// The writing half of a callback-API server stream: one write in flight, the rest queued in
// order, Finish once everything queued is written. It is the gRPC side of backpressure: the
// service asks BufferedBytes() (here: QueuedAudioBytes()) and pauses a request whose client is
// behind, so the queue stays bounded by limits.stream_buffer_bytes plus one sentence's audio.
#pragma once

#include <grpcpp/support/server_callback.h>
#include <grpcpp/support/status.h>

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace voxserve::transport::grpc {

// Base is ::grpc::ServerWriteReactor<Response> or ::grpc::ServerBidiReactor<Request, Response>.
//
// Threads: every call is safe cross thread (service threads and gRPC reactions). Push and
// RequestFinish only record, so they may be called under the owner's own lock (which keeps
// messages from different threads in the owner's order); the calls that pump start gRPC
// operations and must be called with no owner lock held, because gRPC may run a reaction inline.
// Once a Finish is requested and nothing holds it back, any thread's pump may Finish and the
// reactor may be deleted (OnDone) at any moment after. So a thread that is not a reaction (gRPC
// keeps the reactor alive during those) ends its use of the reactor with one call that records
// and pumps under one lock: RequestFinishAndPump or Release. Recording first and pumping in a
// second call left a window in which a write completing on another thread finished the call
// and OnDone deleted the reactor before the second call touched it.
template <typename Base, typename Response>
class QueuedWriteReactor : public Base {
 public:
  // Queues a message carrying `audio_bytes` of audio (counted for backpressure). Dropped once
  // the stream broke or a finish was requested.
  void Push(Response message, size_t audio_bytes) {
    std::lock_guard lock(mutex_);
    PushLocked(std::move(message), audio_bytes);
  }

  // The call's status, sent after every queued message. The first request wins.
  void RequestFinish(::grpc::Status status) {
    std::lock_guard lock(mutex_);
    if (!finish_) finish_ = std::move(status);
  }

  // Starts the next write, or the Finish when nothing is left to write.
  void Pump() {
    std::unique_lock lock(mutex_);
    PumpLocked(lock);
  }

  // RequestFinish and Pump in one step: the caller's last touch of the reactor.
  void RequestFinishAndPump(::grpc::Status status) {
    std::unique_lock lock(mutex_);
    if (!finish_) finish_ = std::move(status);
    PumpLocked(lock);
  }

  // Keeps the Finish back while the owner starts another operation (a read) outside its lock,
  // so that a Finish requested meanwhile cannot overtake it. Release pumps: it may Finish.
  void Hold() {
    std::lock_guard lock(mutex_);
    ++holds_;
  }
  void Release() {
    std::unique_lock lock(mutex_);
    --holds_;
    PumpLocked(lock);
  }

  void PushAndPump(Response message, size_t audio_bytes) {
    std::unique_lock lock(mutex_);
    PushLocked(std::move(message), audio_bytes);
    PumpLocked(lock);
  }

  // Audio bytes queued or being written. Safe cross thread.
  size_t QueuedAudioBytes() const {
    std::lock_guard lock(mutex_);
    return queued_audio_bytes_;
  }

 protected:
  // A message reached the transport (ok) — e.g. resume a paused request. No lock held.
  virtual void OnMessageWritten() {}
  // A write failed: the client is gone. Called once; queued messages are dropped. No lock held.
  virtual void OnStreamBroken() {}

 private:
  void PushLocked(Response message, size_t audio_bytes) {  // requires mutex_
    if (broken_ || finish_) return;
    queue_.emplace_back(std::move(message), audio_bytes);
    queued_audio_bytes_ += audio_bytes;
  }

  // Requires `lock` held on mutex_; releases it before starting an operation.
  void PumpLocked(std::unique_lock<std::mutex>& lock) {
    if (writing_ || finished_) return;
    if (!queue_.empty()) {
      writing_ = true;
      const Response* next = &queue_.front().first;  // deque: stays put while others are pushed
      lock.unlock();
      this->StartWrite(next);
      return;
    }
    if (!finish_ || holds_ > 0) return;
    finished_ = true;
    ::grpc::Status status = *finish_;
    lock.unlock();
    this->Finish(std::move(status));
  }

  void OnWriteDone(bool ok) final {
    bool newly_broken = false;
    {
      std::lock_guard lock(mutex_);
      writing_ = false;
      queued_audio_bytes_ -= queue_.front().second;
      queue_.pop_front();
      if (!ok && !broken_) {
        broken_ = newly_broken = true;
        queue_.clear();
        queued_audio_bytes_ = 0;
      }
    }
    if (newly_broken) {
      OnStreamBroken();
    } else if (ok) {
      OnMessageWritten();
    }
    Pump();  // last: it may Finish
  }

  mutable std::mutex mutex_;
  std::deque<std::pair<Response, size_t>> queue_;  // front is being written while writing_
  size_t queued_audio_bytes_ = 0;
  bool writing_ = false;
  bool broken_ = false;
  int holds_ = 0;
  std::optional<::grpc::Status> finish_;
  bool finished_ = false;  // Finish called
};

}  // namespace voxserve::transport::grpc

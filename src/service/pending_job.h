// A synthesis whose job may not exist yet: its inline voice prompt is still being cloned
// (TtsService::SynthesizeWithPrompt). Transports hold it where they would hold the job.
#pragma once

#include <memory>
#include <mutex>

#include "service/synthesis_job.h"

namespace voxserve::service {

// Safe cross thread. Resume and Cancel reach the job once it is attached; a Cancel that came
// first cancels the job as soon as it is attached (and the service then skips what it can).
class PendingJob {
 public:
  void Resume();
  void Cancel();
  bool cancelled() const;
  // The service, once, when the job has started.
  void Attach(std::shared_ptr<SynthesisJob> job);

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<SynthesisJob> job_;
  bool cancelled_ = false;
};

}  // namespace voxserve::service

#include "service/pending_job.h"

namespace voxserve::service {

// The job's own calls run outside the lock: Cancel completes the job, whose sink may call back.

void PendingJob::Resume() {
  std::shared_ptr<SynthesisJob> job;
  {
    std::lock_guard lock(mutex_);
    job = job_;
  }
  if (job) job->Resume();
}

void PendingJob::Cancel() {
  std::shared_ptr<SynthesisJob> job;
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    job = job_;
  }
  if (job) job->Cancel();
}

bool PendingJob::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

void PendingJob::Attach(std::shared_ptr<SynthesisJob> job) {
  bool cancelled = false;
  {
    std::lock_guard lock(mutex_);
    job_ = job;
    cancelled = cancelled_;
  }
  if (cancelled) job->Cancel();
}

}  // namespace voxserve::service

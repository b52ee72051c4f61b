// voxserve's hidden worker mode: `voxserve --worker --worker-fd N --worker-parent PID
// --worker-spec JSON`, started by the server itself (scheduler/worker_launcher.h) to run one
// model's engine in a process of its own (scheduling.isolation: process). It dies with its parent
// (PR_SET_PDEATHSIG, checked against the parent pid it was given), loads and warms up only its
// model, says READY, then answers batches and pings on its socket until the server closes it.
//
// TEST ONLY (spec.test_faults, set by --fault-injection true): a segment whose text contains
// VOXSERVE_TEST_HANG makes the worker stop answering; VOXSERVE_TEST_CRASH makes it exit at once.
#pragma once

namespace voxserve::server {

// True when argv asks for worker mode (its first argument is --worker).
bool IsWorkerCommandLine(int argc, const char* const* argv);
// Runs the worker; returns the process exit code.
int RunWorker(int argc, const char* const* argv);

}  // namespace voxserve::server

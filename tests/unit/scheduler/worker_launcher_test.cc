// Worker placement (issue 11, item 4): what each worker's spec says about its cpus, its CUDA
// device and its ONNX intra-op threads. CUDA_VISIBLE_DEVICES itself is checked on real workers
// (tests/integration/test_workers.py).
#include "scheduler/worker_launcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace voxserve::scheduler {
namespace {

using ::testing::Contains;
using ::testing::Key;
using ::testing::Not;
using ::testing::Pair;

WorkerSpec Model(const std::string& engine) {
  WorkerSpec spec;
  spec.engine.engine = engine;
  spec.engine.model_id = "m";
  return spec;
}

SchedulerConfig Placement(std::vector<std::string> cpus, std::vector<std::string> devices = {}) {
  SchedulerConfig config;
  config.isolation = Isolation::kProcess;
  config.cpus = std::move(cpus);
  config.devices = std::move(devices);
  return config;
}

std::string Threads(const ProcessLauncher& launcher, int index) {
  return launcher.SpecFor(index).engine.options.at("intra_op_threads");
}

TEST(WorkerPlacementTest, WorkersSharingOneCpuListSplitItsCores) {
  ProcessLauncher launcher(Model("piper"), Placement({"0-7"}), 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(launcher.SpecFor(i).cpus, "0-7");
    EXPECT_EQ(Threads(launcher, i), "2") << "worker " << i;
  }
}

TEST(WorkerPlacementTest, AWorkerWithItsOwnCpusUsesThemAll) {
  ProcessLauncher launcher(Model("kokoro"), Placement({"0-3", "4,5"}), 2);
  EXPECT_EQ(launcher.SpecFor(0).cpus, "0-3");
  EXPECT_EQ(Threads(launcher, 0), "4");
  EXPECT_EQ(launcher.SpecFor(1).cpus, "4,5");
  EXPECT_EQ(Threads(launcher, 1), "2");
}

TEST(WorkerPlacementTest, CpuEntriesCycleAndTheWorkersOnOneEntrySplitIt) {
  // 5 workers on 2 entries: workers 0, 2, 4 share "0-5", workers 1, 3 share "6-9".
  ProcessLauncher launcher(Model("piper"), Placement({"0-5", "6-9"}), 5);
  EXPECT_EQ(launcher.SpecFor(4).cpus, "0-5");
  EXPECT_EQ(Threads(launcher, 4), "2");
  EXPECT_EQ(launcher.SpecFor(3).cpus, "6-9");
  EXPECT_EQ(Threads(launcher, 3), "2");
}

TEST(WorkerPlacementTest, WithoutCpusTheUsableCoresAreSplitAndNeverBelowOne) {
  const int cores = UsableCpus();
  ProcessLauncher two(Model("cosyvoice"), Placement({}), 2);
  EXPECT_EQ(Threads(two, 1), std::to_string(std::max(1, cores / 2)));
  EXPECT_EQ(two.SpecFor(1).cpus, "");
  ProcessLauncher many(Model("piper"), Placement({}), cores * 4);
  EXPECT_EQ(Threads(many, 0), "1");
}

TEST(WorkerPlacementTest, TheModelsOwnThreadCountIsKept) {
  WorkerSpec model = Model("piper");
  model.engine.options["intra_op_threads"] = "3";
  ProcessLauncher launcher(model, Placement({"0-7"}), 4);
  EXPECT_EQ(Threads(launcher, 2), "3");
}

TEST(WorkerPlacementTest, OnnxWorkersOnAListedGpuUseItsDeviceZero) {
  // CUDA_VISIBLE_DEVICES=devices[i] leaves each worker one GPU, which ONNX Runtime calls 0.
  ProcessLauncher launcher(Model("cosyvoice"), Placement({}, {"2", "3"}), 2);
  EXPECT_THAT(launcher.SpecFor(1).engine.options, Contains(Pair("cuda_device_id", "0")));
  ProcessLauncher cpu_only(Model("cosyvoice"), Placement({}), 2);
  EXPECT_THAT(cpu_only.SpecFor(1).engine.options, Not(Contains(Key("cuda_device_id"))));
}

TEST(WorkerPlacementTest, EspeakAndToneWorkersGetNoOnnxOptions) {
  // They refuse unknown options: a worker given these would fail to load.
  for (const std::string engine : {"espeak", "tone"}) {
    ProcessLauncher launcher(Model(engine), Placement({"0-3"}, {"0", "1"}), 2);
    WorkerSpec spec = launcher.SpecFor(1);
    EXPECT_TRUE(spec.engine.options.empty()) << engine;
    EXPECT_EQ(spec.cpus, "0-3") << engine;
  }
}

TEST(WorkerPlacementTest, TheSpecSurvivesTheCommandLine) {
  WorkerSpec model = Model("piper");
  model.warmup = {"Hello."};
  ProcessLauncher launcher(model, Placement({"1", "0"}, {"0"}), 2);
  auto decoded = DecodeWorkerSpec(EncodeWorkerSpec(launcher.SpecFor(0)));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->cpus, "1");
  EXPECT_EQ(decoded->engine.options, launcher.SpecFor(0).engine.options);
  EXPECT_EQ(decoded->warmup, model.warmup);
}

TEST(WorkerPlacementTest, WorkersLogAtTheServersLevelInItsFormat) {
  ASSERT_TRUE(core::ConfigureLogging("warn", "json").ok());
  ProcessLauncher launcher(Model("espeak"), Placement({}, {}), 1);
  auto decoded = DecodeWorkerSpec(EncodeWorkerSpec(launcher.SpecFor(0)));
  ASSERT_TRUE(core::ConfigureLogging("info", "text").ok());
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->log.level, "warn");
  EXPECT_EQ(decoded->log.format, "json");
}

}  // namespace
}  // namespace voxserve::scheduler

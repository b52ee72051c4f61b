// OnnxSession's provider memory and in-memory graphs (onnx_session.h): a buffer allocated through
// a session's allocator is read and written in place by graphs built with ORT's Model Editor
// API, a ScatterND bound to its own data updates it in place (ORT then skips its copy of the
// data: bench/RESULTS.md), and RunInPlace counts exactly the host views' bytes. On the CPU
// provider, as here, provider memory is host memory; the same calls run over device memory with
// CUDA.
#include <gtest/gtest.h>

#include <vector>

#include "engine/onnx/onnx_session.h"

namespace voxserve::engine::onnx {
namespace {

std::unique_ptr<OnnxSession> Graph(GraphSpec spec) {
  OnnxSessionConfig config;
  config.intra_op_threads = 1;
  auto session = OnnxSession::CreateFromGraph(spec, config);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? std::move(*session) : nullptr;
}

GraphSpec Scatter() {
  GraphSpec g;
  g.name = "scatter";
  g.inputs = {{"data", ElementType::kFloat, 2},
              {"indices", ElementType::kInt64, 2},
              {"updates", ElementType::kFloat, 2}};
  g.outputs = {{"out", ElementType::kFloat, 2}};
  g.nodes = {{"ScatterND", {"data", "indices", "updates"}, {"out"}, {}}};
  return g;
}

GraphSpec Zeros() {
  GraphSpec g;
  g.name = "zeros";
  g.inputs = {{"shape", ElementType::kInt64, 1}};
  g.outputs = {{"zeros", ElementType::kFloat, 2}};
  g.nodes = {{"ConstantOfShape", {"shape"}, {"zeros"}, {}}};
  return g;
}

GraphSpec Copy() {
  GraphSpec g;
  g.name = "copy";
  g.inputs = {{"in", ElementType::kFloat, 2}};
  g.outputs = {{"out", ElementType::kFloat, 2}};
  g.nodes = {{"Identity", {"in"}, {"out"}, {}}};
  return g;
}

TEST(ProviderMemory, AScatterBoundToItsOwnDataUpdatesItInPlace) {
  auto scatter = Graph(Scatter()), zeros = Graph(Zeros()), copy = Graph(Copy());
  ASSERT_TRUE(scatter && zeros && copy);
  EXPECT_TRUE(scatter->provider_memory_is_host());  // the CPU provider
  constexpr int64_t kRows = 4, kCols = 3;
  auto buffer = scatter->AllocateProvider(kRows * kCols * sizeof(float));
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  const TensorView data = buffer->View(ElementType::kFloat, {kRows, kCols});
  std::vector<int64_t> shape = {kRows, kCols};
  HostTraffic traffic;
  ASSERT_TRUE(zeros
                  ->RunInPlace({{"shape", {ElementType::kInt64, shape.data(), {2}}}},
                               {{"zeros", data}}, &traffic)
                  .ok());
  EXPECT_EQ(traffic.to_provider, 16);  // the shape; the zeros were written where they stay
  EXPECT_EQ(traffic.from_provider, 0);

  std::vector<int64_t> rows = {2, 0};
  std::vector<float> updates = {1, 2, 3, 4, 5, 6};
  traffic = {};
  absl::Status scattered =
      scatter->RunInPlace({{"data", data},
                           {"indices", {ElementType::kInt64, rows.data(), {2, 1}}},
                           {"updates", {ElementType::kFloat, updates.data(), {2, kCols}}}},
                          {{"out", data}}, &traffic);
  ASSERT_TRUE(scattered.ok()) << scattered;
  EXPECT_EQ(traffic.to_provider, 2 * 8 + 6 * 4);  // indices and updates only
  EXPECT_EQ(traffic.from_provider, 0);

  std::vector<float> host(kRows * kCols, -1.0f);
  traffic = {};
  ASSERT_TRUE(copy->RunInPlace({{"in", data}},
                               {{"out", {ElementType::kFloat, host.data(), {kRows, kCols}}}},
                               &traffic)
                  .ok());
  EXPECT_EQ(traffic.from_provider, kRows * kCols * 4);
  EXPECT_EQ(host, (std::vector<float>{4, 5, 6, 0, 0, 0, 1, 2, 3, 0, 0, 0}));
}

TEST(ProviderMemory, AViewPastTheBufferIsRefusedNamingTheTensor) {
  auto copy = Graph(Copy());
  ASSERT_TRUE(copy);
  auto buffer = copy->AllocateProvider(4 * sizeof(float));
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  const TensorView past = buffer->View(ElementType::kFloat, {2, 2}, sizeof(float));
  EXPECT_EQ(past.data, nullptr);
  std::vector<float> out(4);
  absl::Status status =
      copy->RunInPlace({{"in", past}}, {{"out", {ElementType::kFloat, out.data(), {2, 2}}}});
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("'in'"), std::string::npos) << status;
}

TEST(ProviderMemory, AGraphOrtRefusesIsAnErrorNamingIt) {
  GraphSpec g = Copy();
  g.name = "broken";
  g.nodes[0].op = "NoSuchOperator";
  OnnxSessionConfig config;
  auto session = OnnxSession::CreateFromGraph(g, config);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(session.status().message().find("in-memory graph broken"), std::string::npos)
      << session.status();
}

}  // namespace
}  // namespace voxserve::engine::onnx

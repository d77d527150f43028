// The prover's batch scheduler: requests queued together share the engine's
// steps (continuous batching), and each finishes with the tokens it would
// get alone (the engine's batch invariance).
#include "prover/batch_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "kernels/dispatch.h"
#include "kernels/model/executor.h"
#include "tests/model/engine_fixture.h"

namespace layerproof::prover {
namespace {

namespace model = kernels::model;

TEST(BatchScheduler, EnqueueAllPutsEveryRequestInTheFirstStep) {
  auto synth = model::testing::MakeSynthModel("prover_sched", false);
  auto executor = model::MakeHostExecutor(*kernels::DefaultBackend());
  auto engine = model::Engine::Create(*synth->model, executor.get());
  ASSERT_TRUE(engine.ok());
  BatchScheduler scheduler(**engine, 8);

  constexpr int kRequests = 5;
  absl::Mutex mu;
  int finished = 0;
  std::vector<std::vector<int32_t>> outputs(kRequests);
  std::vector<ScheduledGeneration> gs;
  for (int i = 0; i < kRequests; ++i) {
    ScheduledGeneration g;
    g.request.prompt = {1 + i, 2, 3};
    g.request.max_new_tokens = 4;
    g.request.ignore_eos = true;
    g.on_finished = [&, i](absl::StatusOr<model::FinishedSequence> f) {
      absl::MutexLock lock(&mu);
      ASSERT_TRUE(f.ok());
      outputs[i] = f->output;
      ++finished;
    };
    gs.push_back(std::move(g));
  }
  auto tickets = scheduler.EnqueueAll(std::move(gs));
  ASSERT_TRUE(tickets.ok());
  EXPECT_EQ(tickets->size(), size_t{kRequests});
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* n) { return *n == kRequests; }, &finished));
  }
  EXPECT_EQ(scheduler.max_batch_sequences(), uint64_t{kRequests});
  // Each output is what the request gets alone.
  for (int i = 0; i < kRequests; ++i) {
    model::GenerationRequest alone;
    alone.prompt = {1 + i, 2, 3};
    alone.max_new_tokens = 4;
    alone.ignore_eos = true;
    auto engine_alone = model::Engine::Create(*synth->model, executor.get());
    ASSERT_TRUE(engine_alone.ok());
    auto got = (*engine_alone)->Generate(alone);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(outputs[i], got->output) << "request " << i;
  }
  scheduler.Drain(absl::Now());
}

// A sink that returns false ends its sequence right after that token (a
// client's stop string): the output is exactly the tokens up to it, the
// finish is CANCELLED, and a sequence beside it runs on undisturbed.
TEST(BatchScheduler, SinkReturningFalseEndsTheSequenceAfterThatToken) {
  auto synth = model::testing::MakeSynthModel("prover_sched_stop", false);
  auto executor = model::MakeHostExecutor(*kernels::DefaultBackend());
  auto engine = model::Engine::Create(*synth->model, executor.get());
  ASSERT_TRUE(engine.ok());
  BatchScheduler scheduler(**engine, 8);
  absl::Mutex mu;
  int finished = 0;
  std::vector<model::FinishedSequence> got(2);
  std::vector<int> seen(2, 0);
  std::vector<ScheduledGeneration> gs;
  for (int i = 0; i < 2; ++i) {
    ScheduledGeneration g;
    g.request.prompt = {5, 6, 7};
    g.request.max_new_tokens = 12;
    g.request.ignore_eos = true;
    // Request 0 stops after its third token; request 1 never stops.
    g.on_token = [&, i](int32_t) {
      absl::MutexLock lock(&mu);
      return !(i == 0 && ++seen[i] == 3);
    };
    g.on_finished = [&, i](absl::StatusOr<model::FinishedSequence> f) {
      absl::MutexLock lock(&mu);
      ASSERT_TRUE(f.ok());
      got[i] = *std::move(f);
      ++finished;
    };
    gs.push_back(std::move(g));
  }
  ASSERT_TRUE(scheduler.EnqueueAll(std::move(gs)).ok());
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* n) { return *n == 2; }, &finished));
  }
  EXPECT_EQ(got[0].output.size(), 3u);
  EXPECT_EQ(got[0].finish, model::FinishReason::kCancelled);
  EXPECT_EQ(got[1].output.size(), 12u);
  EXPECT_EQ(got[1].finish, model::FinishReason::kMaxTokens);
  // The stopped output is the first three tokens of the full one.
  EXPECT_TRUE(std::equal(got[0].output.begin(), got[0].output.end(),
                         got[1].output.begin()));
  scheduler.Drain(absl::Now());
}

// Regression (issue 13, item 7): the generation queue never refused. With
// the engine busy, max_waiting requests wait and the next is refused with
// RESOURCE_EXHAUSTED; EnqueueAll is all or nothing.
TEST(BatchScheduler, QueueBeyondMaxWaitingIsRefused) {
  auto synth = model::testing::MakeSynthModel("prover_sched_bound", false);
  auto executor = model::MakeHostExecutor(*kernels::DefaultBackend());
  auto engine = model::Engine::Create(*synth->model, executor.get());
  ASSERT_TRUE(engine.ok());
  BatchScheduler scheduler(**engine, /*max_sequences=*/1, /*max_waiting=*/1);
  absl::Mutex mu;
  bool release = false;
  bool running = false;
  int finished = 0;
  auto request = [&](bool block) {
    ScheduledGeneration g;
    g.request.prompt = {1, 2, 3};
    g.request.max_new_tokens = 2;
    g.request.ignore_eos = true;
    if (block) {
      // Holds the engine thread (a test only: callbacks must not block).
      g.on_token = [&](int32_t) {
        absl::MutexLock lock(&mu);
        running = true;
        mu.Await(absl::Condition(&release));
        return true;
      };
    }
    g.on_finished = [&](absl::StatusOr<model::FinishedSequence> f) {
      EXPECT_TRUE(f.ok()) << f.status();
      absl::MutexLock lock(&mu);
      ++finished;
    };
    return g;
  };
  ASSERT_TRUE(scheduler.Enqueue(request(true)).ok());
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(&running));  // in flight, the engine held
  }
  ASSERT_TRUE(scheduler.Enqueue(request(false)).ok());  // waits
  absl::StatusOr<uint64_t> refused = scheduler.Enqueue(request(false));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted)
      << refused.status();
  EXPECT_NE(refused.status().message().find("max_waiting_requests"),
            std::string::npos);
  std::vector<ScheduledGeneration> batch;
  batch.push_back(request(false));
  EXPECT_EQ(scheduler.EnqueueAll(std::move(batch)).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(scheduler.active(), 2);
  {
    absl::MutexLock lock(&mu);
    release = true;
    mu.Await(absl::Condition(
        +[](int* n) { return *n == 2; }, &finished));
  }
  scheduler.Drain(absl::Now());
}

}  // namespace
}  // namespace layerproof::prover

// rpc/task_pool.h: FIFO order, the queue bound, Drain and Stop.
#include "rpc/task_pool.h"

#include <atomic>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace layerproof::rpc {
namespace {

TEST(TaskPool, RunsInOrderAndDrainRunsWhatIsQueued) {
  TaskPool pool(1);
  std::vector<int> ran;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(pool.Post([&ran, i] { ran.push_back(i); }));
  }
  pool.Drain();
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(pool.Offer({[] {}, {}}, "pool").code(),
            absl::StatusCode::kUnavailable);
}

TEST(TaskPool, PastMaxQueuedOfferIsResourceExhaustedAndNothingIsQueued) {
  TaskPool pool(1, /*max_queued=*/2);
  absl::Notification started, release;
  ASSERT_TRUE(pool.Post([&] {
    started.Notify();
    release.WaitForNotification();
  }));
  started.WaitForNotification();  // running, no longer queued
  std::atomic<int> ran{0};
  EXPECT_TRUE(pool.Post([&] { ++ran; }));
  EXPECT_TRUE(pool.Post([&] { ++ran; }));
  const absl::Status full = pool.Offer({[&] { ++ran; }, {}}, "replay queue");
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(full.message().find("replay queue: 2 tasks queued"),
            std::string::npos)
      << full;
  EXPECT_EQ(pool.queued(), 2u);
  release.Notify();
  pool.Drain();
  EXPECT_EQ(ran.load(), 2);
}

TEST(TaskPool, StopDropsQueuedTasksThroughTheirCallback) {
  TaskPool pool(1);
  absl::Notification started, release;
  ASSERT_TRUE(pool.Post([&] {
    started.Notify();
    release.WaitForNotification();
  }));
  started.WaitForNotification();
  std::atomic<int> ran{0}, dropped{0};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(pool.Post({[&] { ++ran; }, [&] { ++dropped; }}));
  }
  // The first task still runs: Stop drops the three queued ones at once
  // and, past its deadline, says that one did not finish.
  EXPECT_FALSE(pool.Stop(absl::Now()));
  EXPECT_EQ(dropped.load(), 3);
  EXPECT_FALSE(pool.Post([] {}));
  release.Notify();
  EXPECT_TRUE(pool.Stop(absl::Now() + absl::Seconds(10)));
  EXPECT_EQ(ran.load(), 0);
}

}  // namespace
}  // namespace layerproof::rpc

// The background writer (runtime/background_writer.hpp): writes run in the
// order they were posted, on one thread that is started only when needed;
// flush() waits for what was posted before it, also from inside a write
// (without waiting for itself); the destructor runs every queued write; a
// write that throws does not stop the ones after it.
#include <doctest/doctest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/background_writer.hpp"

using kiln::runtime::BackgroundWriter;

TEST_CASE("background writer: writes run in order, off the caller's thread, and flush waits") {
  BackgroundWriter w;
  w.flush(); // nothing posted, no thread: returns at once
  CHECK(w.pending() == 0);
  std::promise<void> go;
  std::shared_future<void> released = go.get_future().share();
  std::vector<int> order;
  std::thread::id ran_on;
  w.post([&, released] {
    released.wait(); // holds the queue, as a slow fsync would
    ran_on = std::this_thread::get_id();
    order.push_back(1);
  });
  for (int i = 2; i <= 5; ++i)
    w.post([&, i] { order.push_back(i); });
  CHECK(w.pending() == 5); // post() returned without running anything
  go.set_value();
  w.flush();
  CHECK(w.pending() == 0);
  CHECK(order == std::vector<int>{1, 2, 3, 4, 5});
  CHECK(ran_on != std::this_thread::get_id());
}

TEST_CASE("background writer: the destructor runs what is queued, a throwing write is dropped") {
  std::atomic<int> done{0};
  {
    BackgroundWriter w;
    std::promise<void> go;
    std::shared_future<void> released = go.get_future().share();
    w.post([released] { released.wait(); });
    w.post([] { throw std::runtime_error("disk full"); });
    for (int i = 0; i < 10; ++i)
      w.post([&] { ++done; });
    go.set_value();
  } // no flush: the destructor drains
  CHECK(done == 10);
}

TEST_CASE("background writer: flush from inside a write does not wait for itself") {
  BackgroundWriter w;
  std::atomic<bool> inner{false};
  w.post([&] {
    w.flush();
    w.post([&] { inner = true; }); // posting from the writer's thread is fine too
  });
  w.flush();
  w.flush(); // the write posted from inside
  CHECK(inner);
}

TEST_CASE("background writer: many threads post and flush at once") {
  BackgroundWriter w;
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        w.post([&] { ++done; });
        if (i % 50 == 0)
          w.flush();
      }
    });
  for (auto &t : threads)
    t.join();
  w.flush();
  CHECK(done == 800);
}

#pragma once
// What a command loaded, handed to the process instead of destroyed.
//
// Freeing a big bundle object by object is slow: at 100,000 concepts it was
// a third of `okfbench context`'s wall time (1.5 s with, 1.1 s without;
// engine/docs/index-cache.md). A command hands what it loaded to
// keep_until_exit and uses the reference it gets back; the kernel takes the
// memory back at once when the process ends. Only for what a command keeps
// to its end: nothing kept is ever destroyed, so its destructor must do
// nothing that matters beyond memory (no file to remove, no lock to drop
// before exit). The objects stay reachable, so leak checkers do not report
// them.
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace okfbench::cli {

template <typename T>
T& keep_until_exit(T value) {
  struct Kept {
    std::mutex mutex;
    std::vector<std::shared_ptr<void>> values;
  };
  static Kept* const kept = new Kept;  // never destroyed, by design
  auto owned = std::make_shared<T>(std::move(value));
  T& out = *owned;
  std::lock_guard lock(kept->mutex);
  kept->values.push_back(std::move(owned));
  return out;
}

}  // namespace okfbench::cli

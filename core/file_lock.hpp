#pragma once
// An exclusive advisory lock on a file (flock), held while the FileLock
// lives and released by the kernel if the process dies, so a crashed run
// never leaves a folder locked. The file records its holder (PID, host, start
// time) for the message another process gets.
//
// Used for a run folder (DIR/okfbench.lock: a second `okfbench run` or
// `merge` on the same folder refuses, naming the holder) and for each
// generated or converted bundle in cache_dir (CACHE/.NAME.lock: a second
// process waits while the first one builds it).
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace okfbench {

class FileLock {
 public:
  enum class Wait { no, yes };

  // Locks `path`, creating it if missing, and writes this process into it.
  // Wait::no: another holder is an InputError saying who holds it and
  // `what_to_do`. Wait::yes: blocks until the holder lets go, calling
  // `on_wait(holder)` once before it blocks. Throws InputError when the file
  // cannot be created.
  static FileLock acquire(const std::filesystem::path& path, Wait wait, const std::string& what_to_do = {},
                          const std::function<void(const std::string& holder)>& on_wait = {});

  // Like Wait::yes, but gives up after `timeout`: then an InputError saying
  // who held it for how long and `what_to_do`. Checks every 20 ms while it
  // waits (flock has no timed form).
  static FileLock acquire_within(const std::filesystem::path& path, std::chrono::milliseconds timeout,
                                 const std::string& what_to_do = {});

  // Who holds the lock on `path` right now, without taking it or writing
  // anything (so it works on folders this process may not write);
  // nullopt when the file is missing or nobody holds it.
  static std::optional<std::string> held_by(const std::filesystem::path& path);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// "pid 4242 on host build-7 since 2026-11-29T12:40:00Z", from a lock file's
// content ("an unknown process" when it says nothing readable).
std::string describe_lock_holder(const std::string& content);

}  // namespace okfbench

#pragma once
// Reading and writing whole files, the same way everywhere.
//
// read_file opens without blocking and reads only regular files: a FIFO, a
// device or a folder at a path a user or a peer controls would otherwise hang
// the command in open(2) or read forever. write_atomically writes a temporary
// file beside the target and renames it into place, so a reader never sees a
// half-written file and a failed write (a full disk, /dev/full) leaves the old
// file, or none, and says why.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <string_view>

namespace okfbench {

// The whole of `path`. On failure throws InputError whose message is
// `cannot_read` (the caller's sentence: what the file is and what to do)
// followed by the reason: the system's ("No such file or directory"), "not a
// regular file (a FIFO)", or that it is larger than `max_bytes`.
std::string read_file(const std::filesystem::path& path, std::string_view cannot_read,
                      std::size_t max_bytes = std::numeric_limits<std::size_t>::max());

// Writes `text` to `path` through PATH.tmp and a rename. A `path` that is not
// a regular file (a device such as /dev/stdout or /dev/full, a FIFO) is written
// in place, since renaming over it would replace it. Throws InputError
// "PATH: cannot write: REASON" on any failure, the flush and close included.
void write_atomically(const std::filesystem::path& path, std::string_view text);

// PARENT/NAME, built once: `build` fills a temporary folder beside it, which
// gets a .okfbench-complete marker and is then renamed into place, all under
// a lock per entry (PARENT/.NAME.lock). Concurrent processes wait for the one
// that builds it instead of building it twice or reading it half-written; an
// interrupted build leaves no half-written entry, and its leftovers are
// removed by the next build. A published entry never changes, so it is read
// without the lock. `on_wait(holder)` is called once if another process holds
// the lock. Exceptions from `build` pass through (after the temporary folder
// is removed); a file-system failure is an InputError naming the entry.
std::filesystem::path publish_folder(const std::filesystem::path& parent, const std::string& name,
                                     const std::function<void(const std::filesystem::path& tmp)>& build,
                                     const std::function<void(const std::string& holder)>& on_wait = {});

// The documented cache folder every command writes its caches under:
// $XDG_CACHE_HOME/okfbench, else $HOME/.cache/okfbench; empty when neither is
// set. Never a folder of the working directory.
std::filesystem::path user_cache_dir();

// user_cache_dir() / `part`. Throws InputError naming `what` and `flag` (the
// setting that chooses another folder) when neither variable is set.
std::filesystem::path user_cache_dir(const std::filesystem::path& part, std::string_view what, std::string_view flag);

}  // namespace okfbench

#pragma once
// Bundles from git. Wherever okfbench takes a bundle folder it also takes a
// git URL, shallow-cloned with the `git` program into a cache folder and
// loaded from there (the harnessx rules):
//
//   https://github.com/OWNER/REPO/tree/REF/SUB/DIR  -> https://github.com/OWNER/REPO.git at REF, subdir SUB/DIR
//   https://gitlab.com/GROUP/REPO/-/tree/REF/SUB     -> https://gitlab.com/GROUP/REPO.git at REF, subdir SUB
//   URL#REF   URL#REF:SUBDIR   URL#:SUBDIR            any git URL with a ref and/or a subdirectory
//   --git-ref REF / --git-subdir DIR (ref: / subdir: in specs) override what the text says.
//
// A text is a git source when it starts with https://, http://, ssh://,
// git://, file:// or USER@HOST: (scp form), or ends in ".git" (before any
// #...); anything else is a folder. A tree link's ref is its first path
// component after /tree/ (a ref with a "/" needs --git-ref).
//
// Cache: CACHE/NAME-HASH/ is the checkout of one repository at one ref (HASH
// of the URL and the ref), CACHE/NAME-HASH.lock its lock. A checkout is
// built in CACHE/NAME-HASH.tmp-PID-N and renamed into place only once every
// git command succeeded, so a failed or interrupted clone never looks
// complete and leaves no folder behind (the lock file stays; it holds no
// content). It is reused until `refresh`, which builds a new one the same
// way and swaps it in. The lock (one per repository and ref, across threads
// and processes) is held from before the cache is looked at until the
// GitCheckout is destroyed, so callers keep it alive through Bundle::load and
// a refresh elsewhere never changes files halfway through a load.
//
// Errors are InputErrors naming the URL and saying what to do: no `git` on
// PATH, a git command that failed (its stderr, cut) or ran past `timeout`,
// a lock not had within `timeout`, a subdirectory that is missing, not a
// directory, or resolves (symbolic links included) outside the repository.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/file_lock.hpp"

namespace okfbench::engine {

struct GitSource {
  std::string url;     // what git clones
  std::string ref;     // branch, tag or commit; "" = the remote's default branch
  std::string subdir;  // '/'-separated, relative to the repository root; "" = the root
  bool operator==(const GitSource&) const = default;

  // "URL#REF:SUBDIR" (parts left out when empty): how records and keys name it.
  std::string text() const;
  // The default bundle name: the last component of the subdirectory, else
  // the repository's name without ".git".
  std::string default_name() const;
};

// A bundle argument (folder or git URL) as messages, output and records show
// it: a URL's user-info dropped and remembered secrets redacted. (A git
// source's credentials are remembered by parse_git_source.)
std::string shown_source(std::string_view where);

// nullopt when `text` names a folder. A non-empty `ref` or `subdir` replaces
// what the text says. UsageError for a URL with an empty repository or a
// subdirectory that is absolute or has a ".." component.
std::optional<GitSource> parse_git_source(std::string_view text, std::string_view ref = {},
                                          std::string_view subdir = {});

struct GitOptions {
  std::filesystem::path cache_dir;  // "" = default_git_cache()
  bool refresh = false;             // clone again even when the cache has a checkout
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};  // lock wait, and each git command
  std::string program = "git";      // found on PATH unless it has a '/'
  // A clone is stopped (and nothing is cached) once its folder, .git
  // included, holds more bytes of regular files or more entries than this.
  std::uint64_t max_bytes = std::uint64_t{1} << 30;
  std::uint64_t max_files = 200'000;
};

// $XDG_CACHE_HOME/okfbench/git, else $HOME/.cache/okfbench/git; InputError
// when neither variable is set.
std::filesystem::path default_git_cache();

class GitCheckout {
 public:
  // Clones (or reuses) `source` as described above and holds its lock.
  static GitCheckout open(const GitSource& source, const GitOptions& options = {});

  const std::filesystem::path& root() const { return root_; }  // the bundle folder (subdir applied)
  const std::string& commit() const { return commit_; }        // the checked-out commit, 40 hex digits
  bool cloned() const { return cloned_; }                      // false when the cache was reused

 private:
  GitCheckout(FileLock lock, std::filesystem::path root, std::string commit, bool cloned)
      : lock_(std::move(lock)), root_(std::move(root)), commit_(std::move(commit)), cloned_(cloned) {}
  FileLock lock_;
  std::filesystem::path root_;
  std::string commit_;
  bool cloned_ = false;
};

}  // namespace okfbench::engine

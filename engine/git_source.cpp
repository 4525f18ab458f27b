#include "engine/git_source.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/hash.hpp"
#include <sys/stat.h>
#include "agents/secrets.hpp"
#include "core/error.hpp"
#include "engine/spec.hpp"
#include "retrieval/index_cache.hpp"

extern char** environ;

namespace okfbench::engine {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kMaxOutput = 64 * 1024;  // of a git command's messages kept for an error
constexpr std::size_t kShownOutput = 600;      // of them shown in the error

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }
bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// USER@HOST:PATH, the scp-like form git accepts for ssh.
bool scp_form(std::string_view text) {
  const auto at = text.find('@');
  const auto colon = text.find(':');
  const auto slash = text.find('/');
  return at != std::string_view::npos && colon != std::string_view::npos && at < colon &&
         (slash == std::string_view::npos || colon < slash);
}

bool looks_like_git(std::string_view base) {
  for (std::string_view scheme : {"https://", "http://", "ssh://", "git://", "file://"})
    if (starts_with(base, scheme)) return true;
  return scp_form(base) || ends_with(base, ".git");
}

std::string with_git_suffix(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return ends_with(url, ".git") ? url : url + ".git";
}

// GitHub (/OWNER/REPO/tree/REF/SUB) and GitLab (/GROUP/.../REPO/-/tree/REF/SUB)
// links: the repository URL, and "REF/SUB" in `rest`.
std::optional<std::string> tree_link(std::string_view base, std::string& rest) {
  if (const auto at = base.find("/-/tree/"); at != std::string_view::npos) {
    rest = std::string(base.substr(at + 8));
    return with_git_suffix(std::string(base.substr(0, at)));
  }
  for (std::string_view host : {"https://github.com/", "http://github.com/"}) {
    if (!starts_with(base, host)) continue;
    std::string_view path = base.substr(host.size());  // OWNER/REPO/tree/REF/...
    const auto owner = path.find('/');
    const auto repo = owner == std::string_view::npos ? owner : path.find('/', owner + 1);
    if (repo == std::string_view::npos || path.substr(repo, 6) != "/tree/") return std::nullopt;
    rest = std::string(path.substr(repo + 6));
    return with_git_suffix(std::string(base.substr(0, host.size() + repo)));
  }
  return std::nullopt;
}

// "a//b/./c/" -> "a/b/c"; UsageError for a ".." part.
std::string clean_subdir(std::string_view subdir, std::string_view source) {
  std::string out;
  std::size_t start = 0;
  while (start <= subdir.size()) {
    std::size_t end = subdir.find('/', start);
    if (end == std::string_view::npos) end = subdir.size();
    const std::string_view part = subdir.substr(start, end - start);
    if (part == "..")
      throw UsageError(fmt::format("{}: the subdirectory `{}` has a `..` part; name a folder inside the repository",
                                   source, subdir));
    if (part.empty() || part == ".") {
      start = end + 1;
      continue;
    }
    if (!out.empty()) out.push_back('/');
    out.append(part);
    start = end + 1;
  }
  return out;
}

// UsageError for a URL git would hand to a transport okfbench does not allow:
// TRANSPORT::ADDRESS (ext:: runs a command, fd:: reads a descriptor) or a
// scheme other than https, http, ssh, git and file. Checked before any git
// runs; kProtocolPolicy refuses the same ones inside git.
void check_transport(const GitSource& source) {
  const std::string shown_url = agents::display_url(source.url);
  const auto scheme = source.url.find("://");
  const auto helper = source.url.find("::");
  if (helper != std::string::npos && (scheme == std::string::npos || helper < scheme))
    throw UsageError(fmt::format("{}: `{}::` URLs hand the address to a git remote helper (ext:: runs a command); "
                                 "use an https://, http://, ssh://, git:// or file:// URL",
                                 shown_url, source.url.substr(0, helper)));
  if (scheme == std::string::npos) return;  // scp form or a local path
  const std::string name = source.url.substr(0, scheme);
  for (std::string_view allowed : {"https", "http", "ssh", "git", "file"})
    if (name == allowed) return;
  throw UsageError(fmt::format("{}: the transport `{}` is not allowed; use an https://, http://, ssh://, git:// or "
                               "file:// URL",
                               shown_url, name));
}

std::string repository_name(std::string_view url) {
  std::string_view rest = url;
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (ends_with(rest, ".git")) rest.remove_suffix(4);
  const auto cut = rest.find_last_of("/:");
  return std::string(cut == std::string_view::npos ? rest : rest.substr(cut + 1));
}

// Characters safe in a file name; the hash beside it keeps names distinct.
std::string file_name_part(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    out += safe ? c : '_';
    if (out.size() == 60) break;
  }
  return out.empty() || out[0] == '.' ? "repo" + out : out;
}

struct Ran {
  bool started = false;
  bool timed_out = false;
  int exit_code = -1;
  std::string output;  // stdout and stderr together
  std::string spawn_error;
  std::string stopped;  // why `watch` stopped the program ("" = it was not stopped)
};

// Checked while a program runs (about every kWatchEvery); a non-empty answer
// says why the program must stop, and it is killed.
using Watch = std::function<std::string()>;
constexpr std::chrono::milliseconds kWatchEvery{250};

// Variables git must not see: a caller's repository must not leak into ours
// (okfbench may run from a git hook), and the caller's protocol policy or
// injected configuration must not widen the allow-list every command gets
// (kProtocolPolicy; GIT_ALLOW_PROTOCOL=ext would let a URL run a command).
// GIT_SSH, GIT_SSH_COMMAND and proxies stay: they are how the caller reaches
// its own servers, and a URL cannot change them.
bool dropped_variable(std::string_view entry) {
  for (std::string_view name : {"GIT_DIR=", "GIT_WORK_TREE=", "GIT_INDEX_FILE=", "GIT_TERMINAL_PROMPT=",
                                "GIT_OBJECT_DIRECTORY=", "GIT_ALTERNATE_OBJECT_DIRECTORIES=", "GIT_COMMON_DIR=",
                                "GIT_NAMESPACE=", "GIT_ALLOW_PROTOCOL=", "GIT_PROTOCOL_FROM_USER=",
                                "GIT_CONFIG_PARAMETERS=", "GIT_CONFIG_COUNT=", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"})
    if (starts_with(entry, name)) return true;
  return false;
}

std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    if (!dropped_variable(entry)) env.emplace_back(entry);
  }
  env.emplace_back("GIT_TERMINAL_PROMPT=0");  // fail instead of asking for a password on a terminal
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& items) {
  std::vector<char*> out;
  for (std::string& s : items) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Runs `program args...` with stdin from /dev/null, in its own process group
// (git starts helpers; a timeout kills them all), collecting its output until
// it exits or `timeout` passes.
Ran run_program(const std::string& program, std::vector<std::string> args, std::chrono::milliseconds timeout,
                const Watch& watch, const std::vector<std::string>& extra_env = {}) {
  Ran ran;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    ran.spawn_error = std::strerror(errno);
    return ran;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  args.insert(args.begin(), program);
  std::vector<char*> argv = pointers(args);
  std::vector<std::string> env = child_environment();
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp = pointers(env);
  pid_t pid = -1;
  const int rc = program.find('/') == std::string::npos
                     ? ::posix_spawnp(&pid, program.c_str(), &actions, &attributes, argv.data(), envp.data())
                     : ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    ran.spawn_error = std::strerror(rc);
    return ran;
  }
  ran.started = true;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto next_watch = std::chrono::steady_clock::now() + kWatchEvery;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (left.count() <= 0) {
      ran.timed_out = true;
      break;
    }
    if (watch && now >= next_watch) {
      next_watch = now + kWatchEvery;
      if (ran.stopped = watch(); !ran.stopped.empty()) break;
    }
    pollfd readable{pipe_fds[0], POLLIN, 0};
    const int ready = ::poll(&readable, 1, static_cast<int>(std::min<std::int64_t>(left.count(), kWatchEvery.count())));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // every writer closed: the program (and its helpers) are done with output
    if (ran.output.size() < kMaxOutput) ran.output.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  if (ran.timed_out || !ran.stopped.empty()) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return ran;
}

std::string shown(const std::string& output) {
  std::string text = output;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > kShownOutput) text = text.substr(0, kShownOutput) + "...";
  return text.empty() ? "(no message)" : text;
}

// The user-info parts of a scheme://USER:PASSWORD@HOST/ URL as written, and
// the password percent-decoded: any of them may be a token.
std::vector<std::string> url_credentials(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return {};
  const std::string_view rest = url.substr(scheme + 3);
  const auto at = rest.substr(0, rest.find('/')).rfind('@');
  if (at == std::string_view::npos) return {};
  const std::string_view info = rest.substr(0, at);
  const auto colon = info.find(':');
  std::vector<std::string> out{std::string(info.substr(0, colon)), agents::url_password(url)};
  if (colon != std::string_view::npos) out.emplace_back(info.substr(colon + 1));
  std::erase_if(out, [](const std::string& part) { return part.size() < agents::kMinSecretLength; });
  return out;
}

// Every git command gets this protocol allow-list ahead of its own options
// (command-line -c wins over every configuration file): the transports
// okfbench documents, and never `ext::` (runs a command) or `fd::`, whatever
// the caller's configuration says. core.fsmonitor and core.hooksPath are
// pinned so that a repository's configuration cannot run a program either.
const std::vector<std::string> kProtocolPolicy = {
    "-c", "protocol.allow=never",        "-c", "protocol.https.allow=always", "-c", "protocol.http.allow=always",
    "-c", "protocol.ssh.allow=always",   "-c", "protocol.git.allow=always",   "-c", "protocol.file.allow=always",
    "-c", "core.fsmonitor=false",        "-c", "core.hooksPath=/dev/null"};

// A URL's user name and password reach git through its environment, never
// its arguments (which every user of the machine can read in ps): the URL
// git is given has no user-info, and a credential helper defined in
// GIT_CONFIG_* (which git reads as command-line configuration) answers with
// them. The empty helper first drops the caller's helpers, so the URL's
// credentials win, as they would if git saw them in the URL.
std::vector<std::string> credential_environment(const std::string& url) {
  if (agents::display_url(url) == url) return {};
  const std::string password = agents::url_password(url);
  std::vector<std::string> env = {
      "GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=credential.helper", "GIT_CONFIG_VALUE_0=",
      "GIT_CONFIG_KEY_1=credential.helper",
      "GIT_CONFIG_VALUE_1=!f() { test \"$1\" = get || exit 0; printf 'username=%s\\n' \"$OKFBENCH_GIT_USERNAME\"; "
      "test -z \"$OKFBENCH_GIT_PASSWORD\" || printf 'password=%s\\n' \"$OKFBENCH_GIT_PASSWORD\"; }; f",
      "OKFBENCH_GIT_USERNAME=" + agents::url_username(url)};
  if (!password.empty()) env.push_back("OKFBENCH_GIT_PASSWORD=" + password);
  return env;
}

// Git's messages with the URL's credentials (if any) replaced: git names the
// URL in some of its errors.
std::string without_credentials(const std::string& text, const GitSource& source) {
  std::string out = agents::redact(text, url_credentials(source.url));
  if (const std::string shown_url = agents::display_url(source.url); shown_url != source.url) {
    for (std::size_t at = out.find(source.url); at != std::string::npos; at = out.find(source.url, at))
      out.replace(at, source.url.size(), shown_url);
  }
  return out;
}

// Runs one git command; InputError naming `source` when it cannot start, fails, times out or is stopped by `watch`.
std::string git(const GitOptions& options, const GitSource& source, std::string_view verb, std::vector<std::string> args,
                const Watch& watch = {}) {
  const std::string what = fmt::format("git {}", verb);
  args.insert(args.begin(), kProtocolPolicy.begin(), kProtocolPolicy.end());
  Ran ran = run_program(options.program, std::move(args), options.timeout, watch, credential_environment(source.url));
  if (!ran.started)
    throw InputError(fmt::format("{}: cannot run `{}` ({}): install git (apt-get install git) or put it on PATH",
                                 source.text(), options.program, ran.spawn_error));
  if (ran.timed_out)
    throw InputError(fmt::format("{}: `{}` did not finish within {} ms; raise --git-timeout (git-timeout in specs) or "
                                 "check the URL",
                                 source.text(), what, options.timeout.count()));
  if (!ran.stopped.empty()) throw InputError(fmt::format("{}: `{}` stopped: {}", source.text(), what, ran.stopped));
  if (ran.exit_code != 0)
    throw InputError(fmt::format("{}: `{}` failed (exit {}): {}", source.text(), what, ran.exit_code,
                                 shown(without_credentials(ran.output, source))));
  return ran.output;
}

void remove_leftovers(const fs::path& cache, const std::string& key) {
  std::error_code ec;
  for (fs::directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (starts_with(name, key + ".tmp-") || starts_with(name, key + ".old-")) fs::remove_all(it->path(), ec);
  }
}

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return fmt::format("{}-{}", ::getpid(), counter++);
}

// The bytes of the regular files and the number of entries (files, folders,
// links; symbolic links not followed) below `dir`, counted until either
// passes its limit.
struct FolderSize {
  std::uint64_t bytes = 0;
  std::uint64_t entries = 0;
};

FolderSize measure(const fs::path& dir, const GitOptions& options) {
  FolderSize size;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    ++size.entries;
    std::error_code type_error;
    if (it->symlink_status(type_error).type() == fs::file_type::regular) {
      std::error_code size_error;
      const std::uintmax_t bytes = it->file_size(size_error);
      if (!size_error) size.bytes += bytes;
    }
    if (size.bytes > options.max_bytes || size.entries > options.max_files) break;
  }
  return size;
}

// "" while the clone in `dir` is within the limits, else what was exceeded.
std::string over_limit(const fs::path& dir, const GitOptions& options) {
  const FolderSize size = measure(dir, options);
  if (size.bytes > options.max_bytes)
    return fmt::format("the clone passed {} bytes (the git clone limit); raise --git-max-bytes if the repository really is that large",
                       options.max_bytes);
  if (size.entries > options.max_files)
    return fmt::format("the clone passed {} files and folders (the git clone limit); raise --git-max-files if "
                       "the repository really has that many",
                       options.max_files);
  return {};
}

// A complete checkout in `tmp`, or an InputError with `tmp` removed. The
// fetch and the checkout are watched and stopped once the folder passes the
// size limits, and the finished checkout is measured once more.
void clone_into(const fs::path& tmp, const GitSource& source, const GitOptions& options) {
  const Watch within_limits = [&] { return over_limit(tmp, options); };
  try {
    git(options, source, "init", {"-c", "init.defaultBranch=okfbench", "init", "-q", "--", tmp.string()});
    git(options, source, "fetch",
        {"-C", tmp.string(), "fetch", "-q", "--depth", "1", "--", agents::display_url(source.url),
         source.ref.empty() ? "HEAD" : source.ref},
        within_limits);
    git(options, source, "checkout", {"-C", tmp.string(), "-c", "advice.detachedHead=false", "checkout", "-q", "FETCH_HEAD"},
        within_limits);
    if (std::string over = within_limits(); !over.empty())
      throw InputError(fmt::format("{}: {}", source.text(), over));
    std::error_code ec;
    fs::remove(tmp / ".git" / "FETCH_HEAD", ec);  // it names the URL, credentials included
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
}

// Renames `tmp` to `dir`, moving an older checkout out of the way first.
void publish(const fs::path& tmp, const fs::path& dir) {
  std::error_code ec;
  const fs::path old = dir.string() + ".old-" + unique_suffix();
  if (fs::exists(dir)) fs::rename(dir, old, ec);
  if (!ec) fs::rename(tmp, dir, ec);
  if (ec) {
    fs::remove_all(tmp);
    throw InputError(fmt::format("cannot publish the checkout {}: {}", dir.string(), ec.message()));
  }
  fs::remove_all(old, ec);
}

// Whether the cached checkout `dir` may be served as its commit: a folder of
// ours (retrieval::untrusted_folder) in which `git status` sees nothing
// changed, added or ignored, index included. Anything else is said on stderr
// and cloned again. Costs one stat per file, far less than a clone.
bool reusable(const fs::path& dir, const GitSource& source, const GitOptions& options) {
  std::string problem = retrieval::untrusted_folder(dir);
  if (problem.empty()) {
    try {
      const std::string status = git(options, source, "status",
                                     {"-C", dir.string(), "status", "--porcelain", "--untracked-files=all", "--ignored"});
      if (!status.empty()) problem = "differs from its commit (`git status --porcelain --ignored`: " + shown(status) + ")";
    } catch (const InputError& e) {
      problem = std::string("cannot be checked: ") + e.what();
    }
  }
  if (problem.empty()) return true;
  std::fprintf(stderr, "okfbench: warning: the cached checkout %s %s; cloning %s again\n", dir.string().c_str(),
               problem.c_str(), source.text().c_str());
  return false;
}

bool inside(const fs::path& root, const fs::path& path) {
  const fs::path relative = path.lexically_relative(root);
  return !relative.empty() && *relative.begin() != "..";
}

fs::path bundle_folder(const fs::path& checkout, const GitSource& source, const std::string& commit) {
  const fs::path repo = fs::canonical(checkout);
  if (source.subdir.empty()) return repo;
  const fs::path wanted = repo / source.subdir;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(wanted, ec)))
    throw InputError(fmt::format("{}: no folder `{}` in the repository at commit {}; check --git-subdir (subdir: in "
                                 "specs) or the link",
                                 source.text(), source.subdir, commit.substr(0, 12)));
  const fs::path resolved = fs::weakly_canonical(wanted, ec);
  if (ec || !inside(repo, resolved))
    throw InputError(fmt::format("{}: the subdirectory `{}` resolves outside the repository (a symbolic link); "
                                 "refusing to load it",
                                 source.text(), source.subdir));
  if (!fs::is_directory(resolved))
    throw InputError(fmt::format("{}: `{}` is not a folder in the repository", source.text(), source.subdir));
  return resolved;
}

}  // namespace

std::string shown_source(std::string_view where) { return agents::redact(agents::display_url(where)); }

std::string GitSource::text() const {
  const std::string shown_url = agents::display_url(url);  // never a token from the URL's user-info
  if (ref.empty() && subdir.empty()) return shown_url;
  return shown_url + "#" + ref + (subdir.empty() ? "" : ":" + subdir);
}

std::string GitSource::default_name() const {
  if (!subdir.empty()) return subdir.substr(subdir.rfind('/') + 1);
  return repository_name(url);
}

std::optional<GitSource> parse_git_source(std::string_view text, std::string_view ref, std::string_view subdir) {
  const auto hash = text.find('#');
  const std::string_view base = text.substr(0, hash);
  if (!looks_like_git(base)) return std::nullopt;
  GitSource source;
  std::string rest;
  if (std::optional<std::string> repo = tree_link(base, rest)) {
    source.url = *repo;
    const auto slash = rest.find('/');
    source.ref = rest.substr(0, slash);
    if (slash != std::string::npos) source.subdir = rest.substr(slash + 1);
  } else {
    source.url = std::string(base);
  }
  if (hash != std::string_view::npos) {
    const std::string_view fragment = text.substr(hash + 1);
    const auto colon = fragment.find(':');
    source.ref = std::string(fragment.substr(0, colon));
    source.subdir = colon == std::string_view::npos ? "" : std::string(fragment.substr(colon + 1));
  }
  if (!ref.empty()) source.ref = std::string(ref);
  if (!subdir.empty()) source.subdir = std::string(subdir);
  source.subdir = clean_subdir(source.subdir, text);
  if (repository_name(source.url).empty())
    throw UsageError(fmt::format("{}: no repository name in the URL; pass a URL such as https://host/owner/repo.git", text));
  if (starts_with(source.url, "-") || starts_with(source.ref, "-"))
    throw UsageError(fmt::format("{}: a URL or ref may not start with '-'", text));
  check_transport(source);
  // Messages quote the text as given (a folder or URL argument): whatever
  // prints one redacts these (agents::redact), and shown_source() drops them.
  for (const std::string& part : url_credentials(source.url)) agents::remember_secret(part);
  return source;
}

fs::path default_git_cache() { return user_cache_dir("git", "git bundles", "--git-cache DIR"); }

GitCheckout GitCheckout::open(const GitSource& source, const GitOptions& options) {
  const fs::path cache = options.cache_dir.empty() ? default_git_cache() : options.cache_dir;
  std::error_code ec;
  fs::create_directories(cache, ec);
  if (ec) throw InputError(fmt::format("cannot create the git cache {}: {}", cache.string(), ec.message()));
  if (const std::string problem = retrieval::untrusted_folder(cache); !problem.empty())
    throw InputError(fmt::format("the git cache {} {}; use a folder only you can write (--git-cache DIR)",
                                 cache.string(), problem));
  const std::string key =
      file_name_part(repository_name(source.url)) + "-" + stable_hash(source.url + "\n" + source.ref);
  FileLock lock = FileLock::acquire_within(cache / (key + ".lock"), options.timeout,
                                           "another okfbench is cloning or loading " + source.text() +
                                               "; wait, or raise --git-timeout");
  remove_leftovers(cache, key);  // of a process that died mid-clone; we hold the lock, so none is in use
  const fs::path dir = cache / key;
  const bool clone = options.refresh || !fs::is_directory(dir / ".git") || !reusable(dir, source, options);
  if (clone) {
    const fs::path tmp = cache / (key + ".tmp-" + unique_suffix());
    clone_into(tmp, source, options);
    publish(tmp, dir);
  }
  std::string commit = git(options, source, "rev-parse", {"-C", dir.string(), "rev-parse", "HEAD"});
  while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r')) commit.pop_back();
  fs::path root = bundle_folder(dir, source, commit);
  return GitCheckout(std::move(lock), std::move(root), std::move(commit), clone);
}

}  // namespace okfbench::engine

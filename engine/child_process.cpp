#include "engine/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <sstream>

#include "engine/run_common.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;

// The value of NAME in a NAME=VALUE list, or nullptr.
const std::string* variable(const std::vector<std::string>& environment, const std::string& name) {
  for (const std::string& entry : environment)
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=') return &entry;
  return nullptr;
}

// argv[0] as a path to execute: a name found in the child's PATH, or a path
// with a '/' taken relative to the working folder. "" when nothing is found.
std::string program_path(const ChildOptions& o) {
  const std::string& program = o.argv.front();
  if (program.find('/') != std::string::npos) {
    const fs::path p(program);
    return (p.is_absolute() ? p : o.working_dir / p).string();
  }
  const std::string* path = variable(o.environment, "PATH");
  std::stringstream dirs(path ? path->substr(5) : std::string("/usr/local/bin:/usr/bin:/bin"));
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = (dir.empty() ? o.working_dir : fs::path(dir).is_absolute() ? fs::path(dir) : o.working_dir / dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate.string();
  }
  return {};
}

std::vector<char*> pointers(std::vector<std::string>& items) {
  std::vector<char*> out;
  for (std::string& s : items) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct Pipe {
  int read = -1, write = -1;
  bool open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    read = fds[0], write = fds[1];
    return true;
  }
  static void close(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  ~Pipe() { close(read), close(write); }
};

void keep_tail(std::string& tail, const char* data, std::size_t n, std::size_t limit) {
  tail.append(data, n);
  if (tail.size() > limit) tail.erase(0, tail.size() - limit);
}

}  // namespace

ChildResult run_child(const ChildOptions& o) {
  ChildResult result;
  const auto start = Clock::now();
  if (o.argv.empty()) {
    result.spawn_error = "no command";
    return result;
  }
  const std::string program = program_path(o);
  if (program.empty()) {
    result.spawn_error = fmt::format("{} is not in PATH", o.argv.front());
    return result;
  }
  Pipe in, out, err;
  if (!in.open() || !out.open() || !err.open()) {
    result.spawn_error = std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO);
  // Sockets and files other threads opened without O_CLOEXEC stay ours.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawn_file_actions_addchdir_np(&actions, o.working_dir.c_str());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<std::string> args = o.argv;
  std::vector<std::string> env = o.environment;
  std::vector<char*> argv = pointers(args);
  std::vector<char*> envp = pointers(env);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  Pipe::close(in.read), Pipe::close(out.write), Pipe::close(err.write);
  if (rc != 0) {
    result.spawn_error = fmt::format("{}: {}", program, std::strerror(rc));
    return result;
  }
  ::fcntl(in.write, F_SETFL, O_NONBLOCK);
  std::size_t written = 0;
  if (o.input.empty()) Pipe::close(in.write);
  const auto deadline = start + o.timeout;
  bool exited = false;
  int status = 0;
  std::optional<Clock::time_point> drain_until;  // after the exit: the group is killed, the pipes end soon
  while (out.read >= 0 || err.read >= 0 || !exited) {
    if (!exited) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) {
        exited = true;
        ::kill(-pid, SIGKILL);  // what it left running in its group
        drain_until = Clock::now() + std::chrono::seconds(2);
      }
    }
    const auto now = Clock::now();
    if (!exited && now >= deadline) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
    }
    if (drain_until && now >= *drain_until) break;  // a pipe held open by a process outside the group
    pollfd fds[3];
    nfds_t n = 0;
    for (int fd : {out.read, err.read}) {
      if (fd >= 0) fds[n++] = {fd, POLLIN, 0};
    }
    if (in.write >= 0) fds[n++] = {in.write, POLLOUT, 0};
    const int wait_ms = exited ? 50 : 20;
    if (n == 0) {
      ::usleep(wait_ms * 1000);
      continue;
    }
    if (::poll(fds, n, wait_ms) < 0 && errno != EINTR) break;
    for (nfds_t i = 0; i < n; ++i) {
      if (!fds[i].revents) continue;
      if (fds[i].fd == in.write) {
        if (fds[i].revents & (POLLERR | POLLHUP)) {
          Pipe::close(in.write);  // it stopped reading: its business
          continue;
        }
        const ssize_t w = ::write(in.write, o.input.data() + written, o.input.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == o.input.size()) Pipe::close(in.write);
        continue;
      }
      char buffer[16384];
      const ssize_t r = ::read(fds[i].fd, buffer, sizeof buffer);
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      const bool is_out = fds[i].fd == out.read;
      if (r <= 0) {
        Pipe::close(is_out ? out.read : err.read);
        continue;
      }
      const auto got = static_cast<std::size_t>(r);
      if (!is_out) {
        keep_tail(result.stderr_tail, buffer, got, o.stderr_tail);
      } else if (result.output.size() + got > o.max_output) {
        result.output.append(buffer, o.max_output - result.output.size());
        if (!result.output_too_large && !exited) ::kill(-pid, SIGKILL);
        result.output_too_large = true;
        Pipe::close(out.read);
      } else {
        result.output.append(buffer, got);
      }
    }
  }
  if (!exited) {
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.ms = ms_since(start);
  return result;
}

std::string child_failure(const ChildResult& r, const ChildOptions& o) {
  if (!r.spawn_error.empty()) return "could not start: " + r.spawn_error;
  if (r.timed_out)
    return fmt::format("timed out after {:g} s (timeout_s); its process group was killed",
                       std::chrono::duration<double>(o.timeout).count());
  if (r.output_too_large) return fmt::format("printed more than {} bytes on stdout; it was killed", o.max_output);
  if (r.signal) return fmt::format("killed by signal {} ({})", r.signal, ::strsignal(r.signal));
  if (r.exit_code != 0) return fmt::format("exited with status {}", r.exit_code);
  return {};
}

}  // namespace okfbench::engine

#include "retrieval/file_reader.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <liburing.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace okfbench::retrieval {
namespace {

// What the kernel enforces for a path of several parts: it stays below the
// directory and no part may be a symbolic link (magic /proc links included).
constexpr std::uint64_t beneath_resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;

// Set once openat2 answered ENOSYS, so later opens go straight to the walk.
std::atomic<bool> openat2_missing{false};

bool is_plain_relative(std::string_view relative) {
  if (relative.empty()) return false;
  std::size_t start = 0;
  while (start <= relative.size()) {
    std::size_t end = std::min(relative.find('/', start), relative.size());
    std::string_view part = relative.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

int openat2_beneath(int directory_fd, const char* path, int flags) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags);
  how.resolve = beneath_resolve;
  return static_cast<int>(::syscall(SYS_openat2, directory_fd, path, &how, sizeof how));
}

// One openat per part, each relative to the descriptor of the part before
// and with O_NOFOLLOW, so no part can be a link, whatever changes meanwhile.
int open_part_by_part(int directory_fd, const std::string& path, int flags) {
  FileDescriptor current(-1);
  int at = directory_fd;
  std::size_t start = 0;
  for (std::size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', start)) {
    std::string part = path.substr(start, slash - start);
    int next = ::openat(at, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return -1;  // errno from openat; `current` closes without touching it
    current.reset(next);
    at = next;
    start = slash + 1;
  }
  return ::openat(at, path.c_str() + start, flags);
}

// O_NONBLOCK: a file swapped for a FIFO after the walk must not block the
// load waiting for a writer; for regular files it changes nothing.
constexpr int open_flags = O_RDONLY | O_NONBLOCK;
// In io_uring too. Since Linux 5.12 a read of an O_NONBLOCK regular file
// that must wait for the disk is retried in the kernel's worker threads, not
// answered with EAGAIN (and an EAGAIN would only send the file through the
// plain path again).
constexpr int ring_open_flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW;

std::string too_large(std::size_t size, std::size_t max_bytes) {
  return fmt::format("file is {} bytes, over the limit of {} bytes; it was skipped (raise --max-file-bytes to "
                     "load it)",
                     size, max_bytes);
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

// Per-file buffer of the io_uring path. A file that fills it is read again
// with plain calls, so its real size is known and checked. Most concept
// files are a few kilobytes; a small buffer keeps the reader's setup cheap.
constexpr std::size_t slot_bytes = 16 * 1024;

// What a completion belongs to: user_data = slot * 3 + step.
enum Step : std::uint64_t { open_step = 0, read_step = 1, close_step = 2 };

}  // namespace

void FileDescriptor::reset(int fd) {
  if (fd_ >= 0) {
    int saved = errno;
    ::close(fd_);
    errno = saved;
  }
  fd_ = fd;
}

int open_beneath(int directory_fd, std::string_view relative, int flags, Resolve how) {
  if (!is_plain_relative(relative)) {
    errno = EINVAL;
    return -1;
  }
  flags |= O_NOFOLLOW | O_CLOEXEC;
  std::string path(relative);
  if (path.find('/') == std::string::npos) return ::openat(directory_fd, path.c_str(), flags);
  if (how == Resolve::best && !openat2_missing.load(std::memory_order_relaxed)) {
    int fd = openat2_beneath(directory_fd, path.c_str(), flags);
    // ENOSYS: kernel before 5.6; EPERM: a seccomp profile that does not know
    // openat2. The walk gives the same answer (and the real error, if any).
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return fd;
    if (errno == ENOSYS) openat2_missing.store(true, std::memory_order_relaxed);
  }
  return open_part_by_part(directory_fd, path, flags);
}

std::string open_error_message(int error) {
  switch (error) {
    case ELOOP:
      return "cannot open the file: it is a symbolic link now (the bundle changed while it was loading); it was "
             "not followed and the file was skipped";
    case ENOTDIR:
      return "cannot open the file: a directory on its path is a symbolic link or no directory now (the bundle "
             "changed while it was loading); it was not followed and the file was skipped";
    case EXDEV:
      return "cannot open the file: its path leaves the bundle directory; it was not followed and the file was "
             "skipped";
    default:
      return fmt::format("cannot read the file ({}); check its permissions", std::strerror(error));
  }
}

FileContent read_whole_file(const FileLocation& file, std::size_t max_bytes) {
  FileContent out;
  FileDescriptor fd(open_beneath(file.directory_fd, file.name, open_flags));
  if (fd.get() < 0) {
    out.error = open_error_message(errno);
    return out;
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    out.error = fmt::format("cannot read the file ({}); check the disk and its permissions", std::strerror(errno));
    return out;
  }
  if (!S_ISREG(info.st_mode)) {
    out.error = fmt::format("{}, not a regular file (the bundle changed while it was loading?); it was skipped",
                            file_kind(info.st_mode));
    return out;
  }
  auto size = static_cast<std::size_t>(info.st_size);
  if (size > max_bytes) {
    out.error = too_large(size, max_bytes);
    return out;
  }
  out.bytes.resize(size);
  std::size_t done = 0;
  while (done < size) {
    ssize_t got = ::read(fd.get(), out.bytes.data() + done, size - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      out.error = fmt::format("cannot read the file ({}); check the disk and its permissions", std::strerror(errno));
      out.bytes.clear();
      return out;
    }
    if (got == 0) break;  // the file shrank while being read
    done += static_cast<std::size_t>(got);
  }
  out.bytes.resize(done);
  return out;
}

struct BatchReader::Ring {
  io_uring ring{};
  open_how beneath{};  // read by the kernel when the batch is submitted
  std::unique_ptr<char[]> buffers;  // not zeroed: the kernel writes before we read
  bool ready = false;

  explicit Ring(std::size_t slots) {
    beneath.flags = ring_open_flags;
    beneath.resolve = beneath_resolve;
    unsigned entries = static_cast<unsigned>(slots * 3);
    // Single issuer + deferred task work (Linux 6.1) keep completions on this
    // thread; older kernels reject the flags, so try again without them.
    if (io_uring_queue_init(entries, &ring, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN) < 0 &&
        io_uring_queue_init(entries, &ring, 0) < 0)
      return;
    if (io_uring_register_files_sparse(&ring, static_cast<unsigned>(slots)) < 0) {
      io_uring_queue_exit(&ring);
      return;
    }
    buffers.reset(new char[slots * slot_bytes]);
    ready = true;
  }
  ~Ring() {
    if (ready) io_uring_queue_exit(&ring);
  }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  char* buffer(std::size_t slot) { return buffers.get() + slot * slot_bytes; }

  // Queues open -> read -> close of one file into direct descriptor `slot`.
  // Hard links run each step even when the one before failed, so the slot is
  // always closed again.
  void queue(const FileLocation& file, std::size_t slot, unsigned read_bytes) {
    auto index = static_cast<unsigned>(slot);
    io_uring_sqe* open = io_uring_get_sqe(&ring);
    // The same rules as open_beneath: one name with O_NOFOLLOW, a longer path
    // through openat2's RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS. A kernel that
    // refuses either answers with an error, and the file is read again the
    // plain way. O_NONBLOCK as there (a FIFO must not hang the ring); see
    // ring_open_flags for why reads still wait for the disk.
    if (file.name.find('/') == std::string::npos)
      io_uring_prep_openat_direct(open, file.directory_fd, file.name.c_str(), ring_open_flags, 0, index);
    else
      io_uring_prep_openat2_direct(open, file.directory_fd, file.name.c_str(), &beneath, index);
    open->flags |= IOSQE_IO_HARDLINK;
    io_uring_sqe_set_data64(open, slot * 3 + open_step);
    io_uring_sqe* read = io_uring_get_sqe(&ring);
    io_uring_prep_read(read, static_cast<int>(index), buffer(slot), read_bytes, 0);
    read->flags |= IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK;
    io_uring_sqe_set_data64(read, slot * 3 + read_step);
    io_uring_sqe* close = io_uring_get_sqe(&ring);
    io_uring_prep_close_direct(close, index);
    io_uring_sqe_set_data64(close, slot * 3 + close_step);
  }

  // Submits the `queued` operations and collects their completions into
  // the results (per slot: the open's and the read's result, or a negative
  // errno). False when the ring did not take them all or failed; the caller
  // then reads with plain calls and drops the ring with whatever it did not
  // take. Waits only for what was submitted, so it cannot hang on the rest.
  bool run(std::size_t queued, std::vector<int>& open_results, std::vector<int>& read_results) {
    // One system call submits the batch and waits for all of it; the loop
    // below only waits again after a signal cut the wait short.
    int submitted = io_uring_submit_and_wait(&ring, static_cast<unsigned>(queued));
    if (submitted < 0) return false;  // the kernel reports an error only when it took nothing
    std::size_t seen = 0;
    while (seen < static_cast<std::size_t>(submitted)) {
      io_uring_cqe* cqe = nullptr;
      int rc = io_uring_wait_cqe(&ring, &cqe);
      if (rc == -EINTR) continue;
      if (rc < 0) return false;
      unsigned head = 0;
      unsigned count = 0;
      io_uring_for_each_cqe(&ring, head, cqe) {
        std::uint64_t data = io_uring_cqe_get_data64(cqe);
        std::size_t slot = data / 3;
        if (data % 3 == open_step) open_results[slot] = cqe->res;
        if (data % 3 == read_step) read_results[slot] = cqe->res;
        ++count;
      }
      io_uring_cq_advance(&ring, count);
      seen += count;
    }
    return static_cast<std::size_t>(submitted) == queued;
  }
};

BatchReader::BatchReader(std::size_t max_batch, bool use_io_uring) : max_batch_(std::max<std::size_t>(1, max_batch)) {
  if (!use_io_uring) return;
  ring_ = std::make_unique<Ring>(max_batch_);
  if (!ring_->ready) ring_.reset();
}

BatchReader::~BatchReader() = default;

std::vector<FileContent> BatchReader::read(std::span<const FileLocation* const> files, std::size_t max_bytes) {
  std::vector<FileContent> contents(files.size());
  bool plain_names = std::all_of(files.begin(), files.end(),
                                 [](const FileLocation* file) { return is_plain_relative(file->name); });
  if (!ring_ || files.size() > max_batch_ || !plain_names) {  // the plain path refuses the others by name
    for (std::size_t i = 0; i < files.size(); ++i) contents[i] = read_whole_file(*files[i], max_bytes);
    return contents;
  }
  // Reading one byte past the limit tells an over-limit file from one at it.
  auto read_bytes = static_cast<unsigned>(max_bytes >= slot_bytes ? slot_bytes : max_bytes + 1);
  for (std::size_t i = 0; i < files.size(); ++i) ring_->queue(*files[i], i, read_bytes);
  std::vector<int> opened(files.size(), -ECANCELED);
  std::vector<int> got(files.size(), -ECANCELED);
  bool ran = ring_->run(files.size() * 3, opened, got);
  for (std::size_t i = 0; i < files.size(); ++i) {
    // Anything unusual (errors, a full buffer, a failed ring) is read again
    // with plain calls, which also word the error messages. So is an empty
    // read: only the plain path checks that the file is a regular one (a
    // FIFO swapped in reads as empty here), and empty files are rare.
    if (!ran || opened[i] < 0 || got[i] <= 0 || static_cast<unsigned>(got[i]) >= read_bytes) {
      contents[i] = read_whole_file(*files[i], max_bytes);
      continue;
    }
    contents[i].bytes.assign(ring_->buffer(i), static_cast<std::size_t>(got[i]));
  }
  if (!ran) ring_.reset();  // do not trust the ring again in this load
  return contents;
}

}  // namespace okfbench::retrieval

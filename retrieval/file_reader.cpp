#include "retrieval/file_reader.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace okfbench::retrieval {
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// O_NONBLOCK: a file swapped for a FIFO after the walk must not block the
// load waiting for a writer; for regular files it changes nothing.
constexpr int open_flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;

int open_file(const FileLocation& file) {
  return file.directory_fd >= 0 ? ::openat(file.directory_fd, file.name.c_str(), open_flags)
                                : ::open(file.absolute.c_str(), open_flags);
}

std::string too_large(std::size_t size, std::size_t max_bytes) {
  return fmt::format("file is {} bytes, over the limit of {} bytes; it was skipped (raise --max-file-bytes to "
                     "load it)",
                     size, max_bytes);
}

// Per-file buffer of the io_uring path. A file that fills it is read again
// with plain calls, so its real size is known and checked. Most concept
// files are a few kilobytes; a small buffer keeps the reader's setup cheap.
constexpr std::size_t slot_bytes = 16 * 1024;

// What a completion belongs to: user_data = slot * 3 + step.
enum Step : std::uint64_t { open_step = 0, read_step = 1, close_step = 2 };

}  // namespace

FileContent read_whole_file(const FileLocation& file, std::size_t max_bytes) {
  FileContent out;
  FileDescriptor fd(open_file(file));
  struct stat info {};
  if (fd.get() < 0 || ::fstat(fd.get(), &info) != 0) {
    out.error = fmt::format("cannot read the file ({}); check its permissions", std::strerror(errno));
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
  std::unique_ptr<char[]> buffers;  // not zeroed: the kernel writes before we read
  bool ready = false;

  explicit Ring(std::size_t slots) {
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
    int directory = file.directory_fd >= 0 ? file.directory_fd : AT_FDCWD;
    const char* path = file.directory_fd >= 0 ? file.name.c_str() : file.absolute.c_str();
    // Without O_NONBLOCK here: io_uring would then answer -EAGAIN for reads
    // that must wait for the disk, instead of waiting. The walk only hands
    // over regular files.
    io_uring_prep_openat_direct(open, directory, path, O_RDONLY, 0, index);
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
  if (!ring_ || files.size() > max_batch_) {
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
    // with plain calls, which also word the error messages.
    if (!ran || opened[i] < 0 || got[i] < 0 || static_cast<unsigned>(got[i]) >= read_bytes) {
      contents[i] = read_whole_file(*files[i], max_bytes);
      continue;
    }
    contents[i].bytes.assign(ring_->buffer(i), static_cast<std::size_t>(got[i]));
  }
  if (!ran) ring_.reset();  // do not trust the ring again in this load
  return contents;
}

}  // namespace okfbench::retrieval

// The parse side of Bundle::load: files are read and parsed on worker threads
// while the walk is still finding more.
#include <algorithm>
#include <optional>

#include "retrieval/bundle_impl.hpp"

namespace okfbench::retrieval::detail {

ParsePipeline::ParsePipeline(const LoadOptions& options, bool digests)
    : options_(options),
      digests_(digests),
      threads_(options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency())) {}

ParsePipeline::~ParsePipeline() { end_walk(); }  // workers finish what is queued, then the jthreads join

void ParsePipeline::end_walk() {
  {
    std::lock_guard lock(mutex_);
    walk_done_ = true;
  }
  ready_.notify_all();
}

void ParsePipeline::add(FileTask task) {
  ++added_;
  pending_.push_back(std::move(task));
  if (pending_.size() == batch_size) hand_over();
}

void ParsePipeline::hand_over() {
  std::size_t queued = 0;
  {
    std::lock_guard lock(mutex_);
    batches_.push_back(Batch{std::move(pending_), {}});
    queued = released_ + batches_.size() - next_;
  }
  pending_.clear();
  ready_.notify_one();
  // A thread more only once there is work waiting for it: small bundles are
  // parsed on the calling thread alone, without the cost of starting threads.
  if (workers_.size() + 1 < threads_ && queued > 1) workers_.emplace_back([this] { work(); });
}

ParsePipeline::Batch* ParsePipeline::take() {
  std::unique_lock lock(mutex_);
  ready_.wait(lock, [this] { return next_ < released_ + batches_.size() || walk_done_; });
  if (next_ == released_ + batches_.size()) return nullptr;
  // A deque: the element stays put while the walk appends more and finish()
  // drops parsed batches from the front.
  return &batches_[next_++ - released_];
}

void ParsePipeline::parse(Batch& batch, Reading& reading) {
  // A ring costs more to set up than it saves on a handful of files.
  if (!reading.reader) reading.reader.emplace(batch_size, options_.io_uring && batch.tasks.size() == batch_size);
  reading.locations.clear();
  for (const FileTask& task : batch.tasks) reading.locations.push_back(&task.location);
  std::vector<FileContent> contents = reading.reader->read(reading.locations, options_.max_file_bytes);
  batch.results.reserve(batch.tasks.size());
  for (std::size_t i = 0; i < batch.tasks.size(); ++i) {
    const auto digest = digests_ ? content_digest(contents[i].bytes) : std::array<unsigned char, 16>{};
    batch.results.push_back(parse_file(batch.tasks[i], options_, std::move(contents[i])));
    batch.results.back().digest = digest;
  }
  {
    std::lock_guard lock(mutex_);
    batch.parsed = true;
  }
  parsed_.notify_one();
}

void ParsePipeline::work() {
  Reading reading;
  while (Batch* batch = take()) parse(*batch, reading);
}

void ParsePipeline::finish(const std::function<void(ParsedFile&)>& take) {
  if (!pending_.empty()) hand_over();
  end_walk();
  Reading reading;
  std::unique_lock lock(mutex_);
  while (!batches_.empty()) {
    if (batches_.front().parsed) {  // the next in walk order: hand it over and free it
      Batch batch = std::move(batches_.front());
      batches_.pop_front();
      ++released_;
      lock.unlock();
      for (ParsedFile& file : batch.results) take(file);
      lock.lock();
    } else if (next_ < released_ + batches_.size()) {  // one no thread has taken: parse it here
      Batch& batch = batches_[next_++ - released_];
      lock.unlock();
      parse(batch, reading);
      lock.lock();
    } else {  // the next is being parsed on a worker
      parsed_.wait(lock);
    }
  }
  lock.unlock();
  for (std::jthread& worker : workers_) worker.join();
}

}  // namespace okfbench::retrieval::detail

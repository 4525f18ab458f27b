#include "retrieval/arena.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace okfbench::retrieval {
namespace {

// Each block is preceded by its size, so resize() knows how much to copy.
// 16 bytes keeps the block aligned like malloc's.
constexpr std::size_t header_bytes = 16;
constexpr std::size_t alignment = 16;

std::size_t round_up(std::size_t bytes) { return (bytes + alignment - 1) & ~(alignment - 1); }

std::size_t& size_of_block(void* block) {
  return *reinterpret_cast<std::size_t*>(static_cast<std::byte*>(block) - header_bytes);
}

}  // namespace

Arena::~Arena() {
  for (Chunk& chunk : chunks_) std::free(chunk.data);
}

void Arena::next_chunk(std::size_t need) {
  if (!chunks_.empty() && current_ + 1 < chunks_.size() && chunks_[current_ + 1].size >= need) {
    ++current_;
    used_ = 0;
    return;
  }
  std::size_t size = std::max(chunk_bytes_, need);
  auto* data = static_cast<std::byte*>(std::malloc(size));
  if (!data) std::abort();
  std::size_t at = chunks_.empty() ? 0 : current_ + 1;
  chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(at), Chunk{data, size});
  current_ = at;
  used_ = 0;
}

void* Arena::allocate(std::size_t bytes) {
  if (bytes > (std::size_t{1} << 48)) std::abort();  // an overflowed count * size
  std::size_t need = header_bytes + round_up(bytes);
  if (chunks_.empty() || used_ + need > chunks_[current_].size) next_chunk(need);
  std::byte* block = chunks_[current_].data + used_ + header_bytes;
  used_ += need;
  size_of_block(block) = bytes;
  last_ = block;
  return block;
}

void* Arena::allocate_zeroed(std::size_t bytes) {
  void* block = allocate(bytes);
  std::memset(block, 0, bytes);
  return block;
}

void* Arena::resize(void* block, std::size_t bytes) {
  if (!block) return allocate(bytes);
  std::size_t old = size_of_block(block);
  if (bytes <= old) {
    size_of_block(block) = bytes;
    return block;
  }
  if (block == last_) {  // the newest block always lies in the current chunk
    std::size_t end = static_cast<std::size_t>(last_ - chunks_[current_].data) + round_up(bytes);
    if (end <= chunks_[current_].size) {
      used_ = end;
      size_of_block(block) = bytes;
      return block;
    }
  }
  void* moved = allocate(bytes);
  std::memcpy(moved, block, old);
  return moved;
}

void Arena::clear() {
  // Oversized chunks served one large document; do not keep them per thread.
  std::erase_if(chunks_, [this](const Chunk& chunk) {
    if (chunk.size <= chunk_bytes_) return false;
    std::free(chunk.data);
    return true;
  });
  while (chunks_.size() > retained_chunks) {
    std::free(chunks_.back().data);
    chunks_.pop_back();
  }
  current_ = 0;
  used_ = 0;
  last_ = nullptr;
}

}  // namespace okfbench::retrieval

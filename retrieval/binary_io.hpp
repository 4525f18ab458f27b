#pragma once
// Private to retrieval: the byte format of the index cache
// (retrieval/index_cache.hpp). Integers are little-endian fixed width,
// strings and vectors a u64 count and their elements. Not part of the
// contract; the cache's format version changes with it.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace okfbench::retrieval::detail {

static_assert(std::endian::native == std::endian::little, "the index cache is written little-endian");

// A cache file that does not read back as written: never trusted, rebuilt.
class CorruptCache : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Appends to a buffer; with a sink, hands the buffer to it whenever it
// passes `chunk` bytes and on flush(), so a large cache never sits in
// memory whole.
// Zero bytes that take `position` to the next multiple of 8, where arrays
// read in place and a cache file's sections start.
constexpr std::size_t padding_to_8(std::uint64_t position) { return static_cast<std::size_t>((8 - position % 8) % 8); }

class Writer {
 public:
  using Sink = std::function<void(std::string_view)>;
  Writer() = default;
  Writer(Sink sink, std::size_t chunk) : sink_(std::move(sink)), chunk_(chunk) {}

  template <typename T>
    requires std::is_trivially_copyable_v<T>
  void put(const T& value) {
    buffer_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put_string(std::string_view text) {
    put<std::uint64_t>(text.size());
    buffer_.append(text);
    drain();
  }
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  void put_array(const std::vector<T>& values) {
    put<std::uint64_t>(values.size());
    buffer_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
    drain();
  }
  // An array Reader::get_span reads in place: its count, then zero bytes up
  // to a multiple of 8 from the start of the stream, then the elements.
  template <typename T>
    requires std::is_trivially_copyable_v<T> && (alignof(T) <= 8)
  void put_span(std::span<const T> values) {
    begin_span(values.size());
    put_elements(values);
  }
  // put_span in pieces: the count, then put_elements for each piece.
  void begin_span(std::size_t count) {
    put<std::uint64_t>(count);
    align();
  }
  // Zero bytes up to a multiple of 8 from the start of the stream.
  void align() { buffer_.append(padding_to_8(position()), '\0'); }
  template <typename T>
    requires std::is_trivially_copyable_v<T> && (alignof(T) <= 8)
  void put_elements(std::span<const T> values) {
    buffer_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
    drain();
  }
  // Bytes written so far, handed to the sink or not.
  std::uint64_t position() const { return flushed_ + buffer_.size(); }
  void put_bytes(std::string_view bytes) {
    buffer_.append(bytes);
    drain();
  }
  void flush() {
    if (!sink_) return;
    if (!buffer_.empty()) sink_(buffer_);
    flushed_ += buffer_.size();
    buffer_.clear();
  }
  void put_strings(const std::vector<std::string>& values) {
    put<std::uint64_t>(values.size());
    for (const std::string& value : values) put_string(value);
  }
  std::string& buffer() { return buffer_; }

 private:
  void drain() {
    if (sink_ && buffer_.size() >= chunk_) flush();
  }
  Sink sink_;
  std::size_t chunk_ = 0;
  std::string buffer_;
  std::uint64_t flushed_ = 0;
};

// Reads what Writer wrote from a span of bytes; every read is bounds-checked
// and a count larger than the bytes left is refused before anything is
// allocated.
class Reader {
 public:
  // Arrays are read in place (get_span) only when `begin` is 8-byte aligned,
  // as a cache file's sections are.
  Reader(const char* begin, const char* end) : begin_(begin), at_(begin), end_(end) {}

  template <typename T>
    requires std::is_trivially_copyable_v<T>
  T get() {
    need(sizeof(T));
    T value;
    std::memcpy(&value, at_, sizeof value);
    advance(sizeof value);
    return value;
  }
  // A count of elements of at least `element_bytes` bytes each.
  std::size_t count(std::size_t element_bytes) {
    const auto n = get<std::uint64_t>();
    if (element_bytes != 0 && n > static_cast<std::uint64_t>(end_ - at_) / element_bytes)
      throw CorruptCache("a count is larger than the bytes left");
    return static_cast<std::size_t>(n);
  }
  std::string_view get_view() { return get_bytes(count(1)); }
  // The next `n` bytes, in place.
  std::string_view get_bytes(std::size_t n) {
    need(n);
    std::string_view out(at_, n);
    advance(n);
    return out;
  }
  std::string get_string() { return std::string(get_view()); }
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  std::vector<T> get_array() {
    const std::size_t n = count(sizeof(T));
    std::vector<T> out(n);
    if (n != 0) std::memcpy(out.data(), at_, n * sizeof(T));
    advance(n * sizeof(T));
    return out;
  }
  // What Writer::put_span wrote, in place: valid while the bytes are.
  template <typename T>
    requires std::is_trivially_copyable_v<T> && (alignof(T) <= 8)
  std::span<const T> get_span() {
    const std::size_t n = count(sizeof(T));
    const std::size_t pad = padding_to_8(static_cast<std::uint64_t>(at_ - begin_));
    need(pad);
    advance(pad);
    if (n > static_cast<std::size_t>(end_ - at_) / sizeof(T)) throw CorruptCache("a count is larger than the bytes left");
    if (reinterpret_cast<std::uintptr_t>(at_) % alignof(T) != 0) throw CorruptCache("an array is not aligned");
    std::span<const T> out(reinterpret_cast<const T*>(at_), n);
    advance(n * sizeof(T));
    return out;
  }
  std::vector<std::string> get_strings() {
    std::vector<std::string> out(count(sizeof(std::uint64_t)));
    for (std::string& value : out) value = get_string();
    return out;
  }
  // An enum stored as a byte, refused unless it is at most `last`.
  template <typename E>
  E get_enum(E last) {
    const auto raw = get<std::uint8_t>();
    if (raw > static_cast<std::uint8_t>(last)) throw CorruptCache("an enumeration value is out of range");
    return static_cast<E>(raw);
  }
  bool get_bool() { return get_enum<std::uint8_t>(1) != 0; }
  bool done() const { return at_ == end_; }
  // Has `release` called with the bytes read past, in pieces of at least
  // `chunk` bytes, so a caller that copies a long stream out of a mapping
  // can drop what it has copied as it goes. Not for streams read in place.
  void release_behind(std::function<void(std::string_view)> release, std::size_t chunk) {
    release_ = std::move(release);
    chunk_ = chunk;
    released_ = at_;
  }
  // Whether only the zero bytes that pad the stream to a multiple of 8 are
  // left (a cache file's sections end so).
  bool done_but_padding() const {
    const std::size_t left = static_cast<std::size_t>(end_ - at_);
    return left < 8 && (static_cast<std::size_t>(end_ - begin_) % 8 == 0) &&
           std::all_of(at_, end_, [](char c) { return c == '\0'; });
  }

 private:
  void need(std::size_t bytes) const {
    if (static_cast<std::size_t>(end_ - at_) < bytes) throw CorruptCache("the file ends early");
  }
  void advance(std::size_t bytes) {
    at_ += bytes;
    if (release_ && static_cast<std::size_t>(at_ - released_) >= chunk_) {
      release_(std::string_view(released_, static_cast<std::size_t>(at_ - released_)));
      released_ = at_;
    }
  }
  const char* begin_;
  const char* at_;
  const char* end_;
  std::function<void(std::string_view)> release_;  // release_behind
  std::size_t chunk_ = 0;
  const char* released_ = nullptr;  // bytes before it were handed to release_
};

}  // namespace okfbench::retrieval::detail

#pragma once
// Private to retrieval: the arrays of a search index, which it either owns
// (built) or reads in place from a mapped index cache file (restored, with
// nothing copied), and their byte format (retrieval/binary_io.hpp).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "retrieval/binary_io.hpp"

namespace okfbench::retrieval::detail {

// A read-only array: a vector it owns, or elements in place.
template <typename T>
class Column {
 public:
  Column() = default;
  explicit Column(std::vector<T> owned) : owned_(std::move(owned)), data_(owned_.data()), size_(owned_.size()) {}
  static Column in_place(std::span<const T> elements) {
    Column c;
    c.data_ = elements.data();
    c.size_ = elements.size();
    return c;
  }
  // A moved vector keeps its buffer, so data_ stays valid.
  Column(Column&& other) noexcept
      : owned_(std::move(other.owned_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  Column& operator=(Column&& other) noexcept {
    owned_ = std::move(other.owned_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  Column(const Column&) = delete;
  Column& operator=(const Column&) = delete;

  std::size_t size() const { return size_; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  std::span<const T> span() const { return {data_, size_}; }

  void save(Writer& w) const { w.put_span(span()); }
  static Column restore(Reader& r) { return in_place(r.get_span<T>()); }

 private:
  std::vector<T> owned_;
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};

// Throws CorruptCache unless `offsets` cut `total` elements into rows:
// starting at 0, never decreasing, ending at `total`.
inline void check_offsets(const Column<std::uint64_t>& offsets, std::size_t total) {
  if (offsets.size() == 0) throw CorruptCache("a table has no row offsets");
  std::uint64_t last = 0;
  for (std::uint64_t at : offsets) {
    if (at < last || at > total) throw CorruptCache("a table's row offsets are out of order");
    last = at;
  }
  if (offsets[0] != 0 || last != total) throw CorruptCache("a table's row offsets do not cover it");
}

// Rows of elements: row i is values[offsets[i], offsets[i + 1]).
template <typename T>
class Rows {
 public:
  Rows() : offsets_(std::vector<std::uint64_t>{0}) {}
  Rows(Column<std::uint64_t> offsets, Column<T> values) : offsets_(std::move(offsets)), values_(std::move(values)) {}

  std::size_t size() const { return offsets_.size() - 1; }
  std::span<const T> operator[](std::size_t row) const {
    return values_.span().subspan(offsets_[row], offsets_[row + 1] - offsets_[row]);
  }
  std::size_t total() const { return values_.size(); }

  void save(Writer& w) const {
    offsets_.save(w);
    values_.save(w);
  }
  static Rows restore(Reader& r) {
    Column<std::uint64_t> offsets = Column<std::uint64_t>::restore(r);
    Column<T> values = Column<T>::restore(r);
    check_offsets(offsets, values.size());
    return Rows(std::move(offsets), std::move(values));
  }

  // Appends rows, then finish() makes the table.
  class Builder {
   public:
    Builder() : offsets_{0} {}
    template <typename Range>
    void add(const Range& row) {
      values_.insert(values_.end(), std::begin(row), std::end(row));
      offsets_.push_back(values_.size());
    }
    Rows finish() { return Rows(Column<std::uint64_t>(std::move(offsets_)), Column<T>(std::move(values_))); }

   private:
    std::vector<std::uint64_t> offsets_;
    std::vector<T> values_;
  };

 private:
  Column<std::uint64_t> offsets_;
  Column<T> values_;
};

// Strings as rows of characters.
class Strings {
 public:
  std::size_t size() const { return rows_.size(); }
  std::string_view operator[](std::size_t i) const {
    const std::span<const char> row = rows_[i];
    return {row.data(), row.size()};
  }
  void save(Writer& w) const { rows_.save(w); }
  static Strings restore(Reader& r) { return Strings(Rows<char>::restore(r)); }

  class Builder {
   public:
    void add(std::string_view text) { rows_.add(text); }
    Strings finish() { return Strings(rows_.finish()); }

   private:
    Rows<char>::Builder rows_;
  };

  Strings() = default;

 private:
  explicit Strings(Rows<char> rows) : rows_(std::move(rows)) {}
  Rows<char> rows_;
};

}  // namespace okfbench::retrieval::detail

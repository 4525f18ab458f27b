#pragma once
// Shared by the libFuzzer targets in this folder.
//
// Each target feeds its input to one reader and lets anything but the
// project's two exceptions (InputError, UsageError: the error policy in
// core/error.hpp) escape, so an unexpected exception ends the run as a
// crash and libFuzzer saves the input. check() turns a broken invariant into
// a crash the same way.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <unistd.h>

namespace okfbench::fuzz {

inline void check(bool ok, std::string_view what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz invariant broken: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

// The input as text.
inline std::string_view as_text(const unsigned char* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Splits `text` at the first line that is exactly `separator`: the part
// before it and the part after it ("" when there is no such line).
struct Halves {
  std::string_view first, second;
};
inline Halves split_at_line(std::string_view text, std::string_view separator) {
  const std::string marker = "\n" + std::string(separator) + "\n";
  if (text.starts_with(marker.substr(1))) return {{}, text.substr(marker.size() - 1)};
  const std::size_t at = text.find(marker);
  if (at == std::string_view::npos) return {text, {}};
  return {text.substr(0, at), text.substr(at + marker.size())};
}

// A scratch folder for targets whose readers take paths, unique per process
// and removed at exit (left behind only when the process crashes).
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::temp_directory_path() / ("okfbench-fuzz-" + std::to_string(getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    d = std::filesystem::canonical(d);
    std::atexit([] { std::error_code ignored; std::filesystem::remove_all(scratch_dir(), ignored); });
    return d;
  }();
  return dir;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace okfbench::fuzz

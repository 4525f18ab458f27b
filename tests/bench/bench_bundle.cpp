// Bundle::load throughput: the 7,425 tldr pages (repo profile) and the demo
// bundle (okf profile). Reports concepts/s (items_per_second) and MB/s
// (bytes_per_second). The whole load is timed: walk, read, parse, link
// resolution. BM_ReadTldrFiles times reading alone, with and without io_uring.
//
//   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DOKFBENCH_BUILD_BENCHMARKS=ON
//   cmake --build build --target bench_bundle && build/tests/bench/bench_bundle
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <optional>

#include "retrieval/bundle.hpp"
#include "retrieval/file_reader.hpp"
#include "tests/support/test_support.hpp"

namespace {
using okfbench::retrieval::BatchReader;
using okfbench::retrieval::Bundle;
using okfbench::retrieval::FileLocation;

// User + system CPU seconds of the whole process (all loader threads), so the
// per-page cost can be read even when other work shares the machine.
double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}
using okfbench::retrieval::LoadOptions;
using okfbench::retrieval::Profile;

void load_and_count(benchmark::State& state, const std::filesystem::path& root, LoadOptions options) {
  if (!std::filesystem::is_directory(root)) {
    state.SkipWithError(("no data at " + root.string()).c_str());
    return;
  }
  std::size_t concepts = 0;
  std::size_t bytes = 0;
  double cpu_start = process_cpu_seconds();
  std::optional<Bundle> bundle;
  for (auto _ : state) {
    bundle.emplace(Bundle::load(root, options));
    concepts = bundle->concepts().size();
    bytes = bundle->total_bytes();
    benchmark::DoNotOptimize(bundle->link_count());
    // Freeing the bundle is not part of loading it: a program loads once and
    // keeps it. The time is left out; cpu_us_per_concept still includes it.
    state.PauseTiming();
    bundle.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * concepts));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  state.counters["concepts"] = static_cast<double>(concepts);
  double loads = static_cast<double>(state.iterations());
  state.counters["cpu_us_per_concept"] =
      concepts ? (process_cpu_seconds() - cpu_start) * 1e6 / (loads * static_cast<double>(concepts)) : 0.0;
}

void BM_LoadTldrPages(benchmark::State& state) {
  LoadOptions options;
  options.profile = Profile::repo;
  options.threads = static_cast<unsigned>(state.range(0));
  options.io_uring = state.range(1) != 0;
  load_and_count(state, okfbench::test::data_root() / "markdown/tldr-pages-en/pages", options);
}
BENCHMARK(BM_LoadTldrPages)
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({2, 0})  // plain system calls, as when io_uring is unavailable
    ->ArgNames({"threads", "io_uring"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Reading alone, one thread: every tldr file through BatchReader in batches
// of 32, with io_uring (1) or plain open/fstat/read/close (0). The floor
// under a load's time per page.
void BM_ReadTldrFiles(benchmark::State& state) {
  std::filesystem::path root = okfbench::test::data_root() / "markdown/tldr-pages-en/pages";
  if (!std::filesystem::is_directory(root)) {
    state.SkipWithError(("no data at " + root.string()).c_str());
    return;
  }
  // Opened relative to their directory, as Bundle::load opens them.
  std::vector<FileLocation> files;
  std::vector<int> directories;
  for (const auto& directory : std::filesystem::directory_iterator(root)) {
    if (!directory.is_directory()) continue;
    directories.push_back(::open(directory.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    for (const auto& entry : std::filesystem::directory_iterator(directory))
      if (entry.is_regular_file()) files.push_back({directories.back(), entry.path().filename().string()});
  }
  BatchReader reader(32, state.range(0) != 0);
  std::vector<const FileLocation*> batch;
  double cpu_start = process_cpu_seconds();
  for (auto _ : state) {
    for (std::size_t begin = 0; begin < files.size(); begin += 32) {
      batch.clear();
      for (std::size_t i = begin; i < std::min(files.size(), begin + 32); ++i) batch.push_back(&files[i]);
      benchmark::DoNotOptimize(reader.read(batch, 1 << 20));
    }
  }
  double reads = static_cast<double>(state.iterations()) * static_cast<double>(files.size());
  state.SetItemsProcessed(static_cast<std::int64_t>(reads));
  state.counters["cpu_us_per_file"] = (process_cpu_seconds() - cpu_start) * 1e6 / reads;
  state.counters["io_uring_used"] = reader.uses_io_uring() ? 1 : 0;
  for (int fd : directories) ::close(fd);
}
BENCHMARK(BM_ReadTldrFiles)->Arg(1)->Arg(0)->ArgName("io_uring")->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LoadDemoBundle(benchmark::State& state) {
  load_and_count(state, okfbench::test::source_dir() / "datasets/bundles/demo", LoadOptions{});
}
BENCHMARK(BM_LoadDemoBundle)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

#include "reports/transcript.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/json_text.hpp"
#include "core/regular_file.hpp"
#include "reports/json_fields.hpp"

namespace okfbench::reports {

using nlohmann::json;
using json_fields::opt;
using json_fields::read;
using json_fields::read_count;
using json_fields::read_required;
using json_fields::require_object;

void to_json(json& j, const TranscriptToolCall& v) { j = json{{"id", v.id}, {"name", v.name}, {"arguments", v.arguments}}; }

void from_json(const json& j, TranscriptToolCall& v) {
  require_object(j, "tool call");
  read(j, "id", v.id);
  read_required(j, "name", v.name);
  read(j, "arguments", v.arguments);
}

void to_json(json& j, const TranscriptMessage& v) {
  j = json{{"role", v.role}, {"content", v.content}};
  if (!v.tool_calls.empty()) j["tool_calls"] = v.tool_calls;
  if (!v.tool_call_id.empty()) j["tool_call_id"] = v.tool_call_id;
  if (!v.name.empty()) j["name"] = v.name;
}

void from_json(const json& j, TranscriptMessage& v) {
  require_object(j, "message");
  read_required(j, "role", v.role);
  if (v.role != "user" && v.role != "assistant" && v.role != "tool" && v.role != "system") {
    throw InputError(fmt::format("field 'role' is \"{}\"; expected user, assistant, tool or system", v.role));
  }
  read(j, "content", v.content);
  read(j, "tool_calls", v.tool_calls);
  read(j, "tool_call_id", v.tool_call_id);
  read(j, "name", v.name);
}

void to_json(json& j, const TranscriptTool& v) {
  j = json{{"name", v.name}, {"description", v.description}, {"parameters", v.parameters}};
}

void from_json(const json& j, TranscriptTool& v) {
  require_object(j, "tool");
  read_required(j, "name", v.name);
  read(j, "description", v.description);
  read(j, "parameters", v.parameters);
}

void to_json(json& j, const TranscriptPrompt& v) {
  j = json{{"type", "prompt"}, {"hash", v.hash}, {"system", v.system}, {"tools", v.tools}};
}

void from_json(const json& j, TranscriptPrompt& v) {
  require_object(j, "prompt");
  read_required(j, "hash", v.hash);
  read(j, "system", v.system);
  read(j, "tools", v.tools);
}

namespace {

// Token counts are range-checked before they are kept: a count outside
// 0..10^12 is damage, not usage.
}  // namespace

void to_json(json& j, const TranscriptTurn& v) {
  j = json{{"prompt_hash", v.prompt_hash},
           {"added", v.added},
           {"reply", v.reply ? json(*v.reply) : json(nullptr)},
           {"stop", v.stop},
           {"input_tokens", opt(v.input_tokens)},
           {"cached_tokens", opt(v.cached_tokens)},
           {"cache_write_tokens", opt(v.cache_write_tokens)},
           {"output_tokens", opt(v.output_tokens)},
           {"ms", v.ms}};
  if (v.restart) j["restart"] = true;
  if (!v.error.empty()) j["error"] = v.error;
}

void from_json(const json& j, TranscriptTurn& v) {
  require_object(j, "turn");
  read_required(j, "prompt_hash", v.prompt_hash);
  read(j, "added", v.added);
  read(j, "restart", v.restart);
  read(j, "reply", v.reply);
  read(j, "stop", v.stop);
  read(j, "error", v.error);
  read_count(j, "input_tokens", v.input_tokens);
  read_count(j, "cached_tokens", v.cached_tokens);
  read_count(j, "cache_write_tokens", v.cache_write_tokens);
  read_count(j, "output_tokens", v.output_tokens);
  read(j, "ms", v.ms);
}

void to_json(json& j, const Transcript& v) {
  j = json{{"type", "trial"}, {"version", v.version}, {"trial_key", v.trial_key}, {"turns", v.turns},
           {"answer", v.answer}};
  if (!v.unsent.empty()) j["unsent"] = v.unsent;
  if (!v.error.empty()) j["error"] = v.error;
}

void from_json(const json& j, Transcript& v) {
  require_object(j, "transcript");
  read_required(j, "version", v.version);
  if (v.version < 1 || v.version > kTranscriptVersion) {
    throw InputError(fmt::format("transcript version {} is not supported (this okfbench reads 1..{})", v.version,
                                 kTranscriptVersion));
  }
  read_required(j, "trial_key", v.trial_key);
  read(j, "turns", v.turns);
  read(j, "unsent", v.unsent);
  read(j, "answer", v.answer);
  read(j, "error", v.error);
}

std::vector<const TranscriptTurn*> answered_turns(const Transcript& t) {
  std::vector<const TranscriptTurn*> out;
  for (const auto& turn : t.turns) {
    if (turn.reply) out.push_back(&turn);
  }
  return out;
}

std::map<std::string, const TranscriptMessage*> tool_results_by_call(const Transcript& t) {
  std::map<std::string, const TranscriptMessage*> out;
  auto note = [&](const std::vector<TranscriptMessage>& messages) {
    for (const auto& m : messages) {
      if (m.role == "tool") out[m.tool_call_id] = &m;
    }
  };
  for (const auto& turn : t.turns) note(turn.added);
  note(t.unsent);
  return out;
}

const Transcript* TranscriptSet::find(std::string_view trial_key) const {
  for (auto it = trials.rbegin(); it != trials.rend(); ++it) {
    if (it->trial_key == trial_key) return &*it;
  }
  return nullptr;
}

const TranscriptPrompt* TranscriptSet::prompt(std::string_view hash) const {
  auto it = prompts.find(std::string(hash));
  return it == prompts.end() ? nullptr : &it->second;
}

namespace {

namespace fs = std::filesystem;

// The compressed file is read whole; a FIFO or a device in its place is refused.
std::string slurp(const fs::path& path) { return RegularFile(path).read_all(std::uint64_t{4} << 30); }

// Bounds on what a transcripts file may expand to: a 122 KB zstd bomb used
// to end show, report and calibrate in std::bad_alloc. One line holds one
// trial's whole conversation; the total is what every reader keeps in memory.
constexpr std::size_t kMaxTranscriptLineBytes = std::size_t{256} << 20;
constexpr std::uint64_t kMaxTranscriptBytes = std::uint64_t{8} << 30;

// Decompresses one frame in a stream (no trust in a size the frame claims)
// and calls `line(text, number)` for each line as soon as it is whole, so
// only one line is ever held. `total` counts the file's decompressed bytes.
template <class Line>
void decompress_frame(std::string_view frame, const fs::path& path, std::size_t offset, std::uint64_t& total, Line line) {
  std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  std::string pending;
  std::string chunk(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer in{frame.data(), frame.size(), 0};
  std::size_t left = 1, number = 0;
  const auto too_big = [&](std::string_view what) {
    return InputError(fmt::format("{}: the zstd frame at byte {} expands to {}; the file is damaged or not a transcripts "
                                  "file of okfbench (move it away to report without transcripts)",
                                  path.string(), offset, what));
  };
  while (in.pos < in.size || left != 0) {
    ZSTD_outBuffer buffer{chunk.data(), chunk.size(), 0};
    left = ZSTD_decompressStream(ctx.get(), &buffer, &in);
    if (ZSTD_isError(left)) {
      throw InputError(fmt::format("{}: the zstd frame at byte {} is damaged ({}); the file cannot be read past it",
                                   path.string(), offset, ZSTD_getErrorName(left)));
    }
    total += buffer.pos;
    if (total > kMaxTranscriptBytes) throw too_big(fmt::format("more than {} GiB in all", kMaxTranscriptBytes >> 30));
    std::string_view got(chunk.data(), buffer.pos);
    for (std::size_t end; (end = got.find('\n')) != std::string_view::npos; got.remove_prefix(end + 1)) {
      pending.append(got.substr(0, end));
      line(std::string_view(pending), ++number);
      pending.clear();
    }
    pending.append(got);
    if (pending.size() > kMaxTranscriptLineBytes)
      throw too_big(fmt::format("a line of more than {} MiB", kMaxTranscriptLineBytes >> 20));
    if (buffer.pos == 0 && in.pos == in.size) break;
  }
  if (!pending.empty()) line(std::string_view(pending), ++number);
}

struct FileContent {
  TranscriptSet set;
  std::size_t good_bytes = 0;  // bytes of complete frames (the rest is a torn tail)
  std::size_t total_bytes = 0;
};

void add_line(FileContent& c, std::string_view line, const std::string& where) {
  const json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw InputError(fmt::format("{}: not a JSON object", where));
  try {
    const std::string type = j.value("type", "");
    if (type == "prompt") {
      TranscriptPrompt p = j.get<TranscriptPrompt>();
      c.set.prompts[p.hash] = std::move(p);
      ++c.set.prompt_lines;
    } else if (type == "trial") {
      c.set.trials.push_back(j.get<Transcript>());
      ++c.set.trial_lines;
    } else {
      throw InputError(fmt::format("field 'type' is \"{}\"; expected \"prompt\" or \"trial\"", type));
    }
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", where, e.what()));
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: {}", where, e.what()));
  }
}

FileContent read_file(const fs::path& path) {
  FileContent c;
  const std::string bytes = slurp(path);
  c.total_bytes = bytes.size();
  std::size_t offset = 0;
  std::uint64_t total = 0;
  while (offset < bytes.size()) {
    const std::size_t size = ZSTD_findFrameCompressedSize(bytes.data() + offset, bytes.size() - offset);
    if (ZSTD_isError(size)) break;  // a frame cut short by a kill
    decompress_frame(std::string_view(bytes).substr(offset, size), path, offset, total,
                     [&](std::string_view line, std::size_t line_no) {
                       if (!line.empty())
                         add_line(c, line, fmt::format("{}: frame at byte {}, line {}", path.string(), offset, line_no));
                     });
    offset += size;
  }
  c.good_bytes = offset;
  return c;
}

// The last transcript of each key, in the order those were written.
std::vector<Transcript> last_of_each(std::vector<Transcript> trials, const std::set<std::string>* keep) {
  std::map<std::string, std::size_t> last;
  for (std::size_t i = 0; i < trials.size(); ++i) last[trials[i].trial_key] = i;
  std::vector<Transcript> out;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    if (last[trials[i].trial_key] != i) continue;
    if (keep && !keep->count(trials[i].trial_key)) continue;
    out.push_back(std::move(trials[i]));
  }
  return out;
}

std::string compress(std::string_view text) {
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> ctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_compressionLevel, 3);
  ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_checksumFlag, 1);  // damage is found, not read as text
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const std::size_t size = ZSTD_compress2(ctx.get(), out.data(), out.size(), text.data(), text.size());
  if (ZSTD_isError(size)) throw InputError(fmt::format("cannot compress a transcript: {}", ZSTD_getErrorName(size)));
  out.resize(size);
  return out;
}

// The frame of one trial: the prompts it needs that `written` lacks, then its line.
std::string frame_text(const Transcript& t, const std::vector<TranscriptPrompt>& prompts, std::set<std::string>& written) {
  std::string text;
  for (const auto& p : prompts) {
    if (!written.insert(p.hash).second) continue;
    text += json_text(json(p)) + "\n";
  }
  text += json_text(json(t)) + "\n";
  return text;
}

void write_all(int fd, std::string_view bytes, const fs::path& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw InputError(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

int open_append(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(fmt::format("cannot open {} to append transcripts: {}", path.string(), std::strerror(errno)));
  return fd;
}

// Rewrites the file with `trials` (one frame each) through a temporary file.
std::set<std::string> rewrite(const fs::path& path, const std::vector<Transcript>& trials,
                              const std::map<std::string, TranscriptPrompt>& prompts) {
  const fs::path tmp = path.string() + ".tmp";
  std::set<std::string> written;
  {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw InputError(fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
    try {
      for (const auto& t : trials) {
        std::vector<TranscriptPrompt> needed;
        for (const auto& turn : t.turns) {
          auto it = prompts.find(turn.prompt_hash);
          if (it != prompts.end()) needed.push_back(it->second);
        }
        write_all(fd, compress(frame_text(t, needed, written)), tmp);
      }
    } catch (...) {
      ::close(fd);
      std::error_code ec;
      fs::remove(tmp, ec);
      throw;
    }
    ::close(fd);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw InputError(fmt::format("cannot replace {}: {}", path.string(), ec.message()));
  return written;
}

}  // namespace

TranscriptSet read_transcripts(const fs::path& path) {
  FileContent c = read_file(path);
  c.set.trials = last_of_each(std::move(c.set.trials), nullptr);
  return std::move(c.set);
}

std::optional<TranscriptSet> read_run_transcripts(const fs::path& run_dir) {
  const fs::path path = run_dir / kTranscriptsFile;
  if (!fs::exists(path)) return std::nullopt;
  return read_transcripts(path);
}

std::unique_ptr<TranscriptWriter> TranscriptWriter::open(const fs::path& run_dir, const std::set<std::string>& stored) {
  const fs::path path = run_dir / kTranscriptsFile;
  std::set<std::string> written;
  if (fs::exists(path)) {
    FileContent c = read_file(path);
    const std::size_t lines = c.set.trial_lines;
    std::vector<Transcript> kept = last_of_each(std::move(c.set.trials), &stored);
    if (c.good_bytes != c.total_bytes || kept.size() != lines) {
      written = rewrite(path, kept, c.set.prompts);
    } else {
      for (const auto& [hash, prompt] : c.set.prompts) written.insert(hash);
    }
  }
  return std::unique_ptr<TranscriptWriter>(new TranscriptWriter(path, open_append(path), std::move(written)));
}

TranscriptWriter::TranscriptWriter(fs::path path, int fd, std::set<std::string> written)
    : path_(std::move(path)), fd_(fd), written_prompts_(std::move(written)) {}

TranscriptWriter::~TranscriptWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void TranscriptWriter::add(const Transcript& transcript, const std::vector<TranscriptPrompt>& prompts) {
  std::lock_guard lock(mutex_);
  std::set<std::string> written = written_prompts_;
  const std::string frame = compress(frame_text(transcript, prompts, written));
  write_all(fd_, frame, path_);
  written_prompts_ = std::move(written);
}

}  // namespace okfbench::reports

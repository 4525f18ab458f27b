#include "reports/transcript.hpp"

#include <sys/stat.h>

#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::reports {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TranscriptPrompt prompt(const std::string& hash) {
  return {hash, "You answer from the bundle.", {{"search", "Find concepts", R"({"type":"object"})"}}};
}

Transcript trial(const std::string& key, const std::string& answer) {
  Transcript t;
  t.trial_key = key;
  TranscriptTurn first;
  first.prompt_hash = "p1";
  first.added = {{"user", "What is " + key + "?", {}, "", ""}};
  first.reply = TranscriptMessage{"assistant", "", {{"c1", "search", R"({"query":"x"})"}}, "", ""};
  first.stop = "tool_calls";
  first.input_tokens = 120;
  first.cached_tokens = 0;
  first.output_tokens = 9;
  first.ms = 1.5;
  TranscriptTurn second;
  second.prompt_hash = "p1";
  second.added = {{"tool", R"([{"id":"a","title":"A"}])", {}, "c1", "search"}};
  second.reply = TranscriptMessage{"assistant", answer, {}, "", ""};
  second.stop = "end_turn";
  second.input_tokens = 180;
  t.turns = {first, second};
  t.answer = answer;
  return t;
}

std::uintmax_t size_of(const fs::path& p) { return fs::file_size(p); }

TEST(Transcript, TrialsRoundTripAndEachPromptIsStoredOnce) {
  const fs::path dir = test::fresh_dir("transcript-roundtrip");
  {
    auto w = TranscriptWriter::open(dir, {});
    w->add(trial("a", "A is a."), {prompt("p1")});
    w->add(trial("b", "B is b."), {prompt("p1")});
  }
  const TranscriptSet set = read_transcripts(dir / kTranscriptsFile);
  ASSERT_EQ(set.trials.size(), 2u);
  EXPECT_EQ(set.trials[0], trial("a", "A is a."));
  EXPECT_EQ(*set.find("b"), trial("b", "B is b."));
  EXPECT_EQ(set.find("c"), nullptr);
  ASSERT_EQ(set.prompts.size(), 1u);
  EXPECT_EQ(*set.prompt("p1"), prompt("p1"));
  EXPECT_EQ(set.prompt_lines, 1u);  // the second trial named it and did not store it again
  EXPECT_EQ(set.trial_lines, 2u);
}

TEST(Transcript, ATornLastFrameIsIgnoredAndCutWhenTheRunResumes) {
  const fs::path dir = test::fresh_dir("transcript-torn");
  const fs::path file = dir / kTranscriptsFile;
  {
    auto w = TranscriptWriter::open(dir, {});
    w->add(trial("a", "A."), {prompt("p1")});
    w->add(trial("b", "B."), {prompt("p1")});
  }
  const auto whole = size_of(file);
  // A kill in the middle of the third frame's write: its first bytes only.
  const std::string bytes = test::read_file(file);
  test::write_file(file, bytes + bytes.substr(0, 20));
  EXPECT_EQ(read_transcripts(file).trials.size(), 2u);
  {
    auto w = TranscriptWriter::open(dir, {"a", "b"});
    EXPECT_EQ(size_of(file), whole);
    w->add(trial("c", "C."), {prompt("p1")});
  }
  const TranscriptSet set = read_transcripts(file);
  ASSERT_EQ(set.trials.size(), 3u);
  EXPECT_EQ(set.trials[2].trial_key, "c");
  EXPECT_EQ(set.prompt_lines, 1u);
}

TEST(Transcript, OpeningForAResumeDropsTrialsWithoutARecordAndKeepsTheLastOfEachKey) {
  const fs::path dir = test::fresh_dir("transcript-orphans");
  {
    auto w = TranscriptWriter::open(dir, {});
    w->add(trial("a", "first run"), {prompt("p1")});
    w->add(trial("b", "killed before its record was stored"), {prompt("p1")});
    w->add(trial("a", "second run"), {prompt("p1")});
  }
  EXPECT_EQ(read_transcripts(dir / kTranscriptsFile).find("a")->answer, "second run");  // readers take the last
  { auto w = TranscriptWriter::open(dir, {"a"}); }
  const TranscriptSet set = read_transcripts(dir / kTranscriptsFile);
  ASSERT_EQ(set.trials.size(), 1u);
  EXPECT_EQ(set.trial_lines, 1u);
  EXPECT_EQ(set.trials[0].answer, "second run");
  EXPECT_EQ(*set.prompt("p1"), prompt("p1"));  // still there for the trial that names it
}

// A 300 MiB line of zeros packs into a few kilobytes of zstd; read whole, a
// larger one ended show, report and calibrate in std::bad_alloc.
TEST(ResourceBounds, AZstdBombIsAnInputErrorNamingTheFile) {
  if (std::system("command -v zstd >/dev/null") != 0) GTEST_SKIP() << "zstd (the program) is not installed";
  const fs::path dir = test::fresh_dir("transcript-bomb");
  const fs::path file = dir / kTranscriptsFile;
  ASSERT_EQ(std::system(("head -c 300M /dev/zero | zstd -q -1 -c > '" + file.string() + "'").c_str()), 0);
  EXPECT_LT(fs::file_size(file), 200'000u);
  try {
    read_transcripts(file);
    FAIL() << "the bomb was read";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(file.string()));
    EXPECT_THAT(e.what(), HasSubstr("a line of more than 256 MiB"));
  }
}

TEST(ResourceBounds, AFifoInPlaceOfTranscriptsIsRefusedNotWaitedOn) {
  const fs::path dir = test::fresh_dir("transcript-fifo");
  const fs::path file = dir / kTranscriptsFile;
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  EXPECT_THROW(read_transcripts(file), InputError);
}

TEST(Transcript, DamageIsAnErrorNamingTheFileAndWhere) {
  const fs::path dir = test::fresh_dir("transcript-damage");
  const fs::path file = dir / kTranscriptsFile;
  {
    auto w = TranscriptWriter::open(dir, {});
    // Text that does not compress, so the middle of the file is the block's content, not a header.
    std::string noise;
    std::uint32_t state = 7;
    for (int i = 0; i < 4000; ++i) noise += static_cast<char>('a' + (state = state * 1103515245u + 12345u) % 26);
    w->add(trial("a", noise), {prompt("p1")});
  }
  std::string bytes = test::read_file(file);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);  // inside the frame: the checksum fails
  test::write_file(file, bytes);
  try {
    read_transcripts(file);
    FAIL() << "a damaged frame was read";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(file.string()));
    EXPECT_THAT(e.what(), HasSubstr("byte 0"));
  }
  EXPECT_THROW(TranscriptWriter::open(dir, {"a"}), InputError);
  EXPECT_THROW(read_transcripts(dir / "missing.jsonl.zst"), InputError);
}

TEST(Transcript, ABadFieldIsAnErrorNamingTheLineAndTheField) {
  nlohmann::json j = trial("a", "A.");
  j["turns"][0]["input_tokens"] = -5;
  EXPECT_THROW(j.get<Transcript>(), InputError);
  j = trial("a", "A.");
  j["turns"][0]["added"][0]["role"] = "oracle";
  try {
    (void)j.get<Transcript>();
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("role"));
  }
  j = trial("a", "A.");
  j["version"] = kTranscriptVersion + 1;
  EXPECT_THROW(j.get<Transcript>(), InputError);
}

}  // namespace
}  // namespace okfbench::reports

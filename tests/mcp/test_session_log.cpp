#include "mcp/session_log.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::mcp {
namespace {

reports::SessionEvent error_event(std::string session) {
  reports::SessionEvent e;
  e.event = "error";
  e.session = std::move(session);
  e.code = -32601;
  e.message = "method 'x' not found";
  return e;
}

TEST(SessionLog, AppendsOneLinePerEventAcrossServers) {
  std::filesystem::path path = test::fresh_dir("session-log") / "s.jsonl";
  {
    SessionLog log(path);
    log.write(error_event("first-session"));
  }
  SessionLog again(path);
  again.write(error_event("second-session"));
  std::vector<reports::SessionEvent> events = reports::read_session_log(path);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].session, "first-session");
  EXPECT_EQ(events[1], error_event("second-session"));
}

TEST(SessionLog, AFolderThatIsNotThereIsAnInputErrorNamingThePath) {
  std::filesystem::path path = test::fresh_dir("session-log") / "missing" / "s.jsonl";
  try {
    SessionLog log(path);
    FAIL() << "opened " << path;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos);
  }
}

}  // namespace
}  // namespace okfbench::mcp

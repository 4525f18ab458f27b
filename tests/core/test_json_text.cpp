#include "core/json_text.hpp"

#include <gtest/gtest.h>

namespace okfbench {
namespace {

TEST(JsonText, ReplacesInvalidUtf8InsteadOfThrowing) {
  nlohmann::json doc = {{"id", "caf\xE9"}, {"ok", "caf\xC3\xA9"}};
  EXPECT_THROW(doc.dump(), nlohmann::json::type_error);  // what json_text exists to avoid
  EXPECT_EQ(json_text(doc), "{\"id\":\"caf\xEF\xBF\xBD\",\"ok\":\"caf\xC3\xA9\"}");
  EXPECT_EQ(json_text(doc, 2), "{\n  \"id\": \"caf\xEF\xBF\xBD\",\n  \"ok\": \"caf\xC3\xA9\"\n}");
  nlohmann::ordered_json ordered = {{"z", "\xFF"}, {"a", 1}};
  EXPECT_EQ(json_text(ordered), "{\"z\":\"\xEF\xBF\xBD\",\"a\":1}");
}

}  // namespace
}  // namespace okfbench

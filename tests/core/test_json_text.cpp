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

TEST(ReportsEmbedTextSafely, JsonForHtmlHasNoMarkupCharactersAndMeansTheSame) {
  const nlohmann::json doc = {{"answer", "<!-- then </script><script>alert(1)</script> & \xE2\x80\xA8\xE2\x80\xA9 >"}};
  const std::string safe = json_for_html(json_text(doc));
  EXPECT_EQ(safe.find_first_of("<>&"), std::string::npos);
  EXPECT_EQ(safe.find("\xE2\x80\xA8"), std::string::npos);
  EXPECT_EQ(safe.find("\xE2\x80\xA9"), std::string::npos);
  EXPECT_NE(safe.find("\\u003c!--"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(safe), doc);  // the escapes read back as the same text
}

}  // namespace
}  // namespace okfbench

#include "common/json_fields.h"

#include <gtest/gtest.h>

namespace perseus {
namespace {

TEST(JsonFields, ErrorsNameTheFieldTheRuleAndTheValue) {
  const Json j = Json::parse(R"({"pp": -1, "x": 1.5, "name": 7, "ok": "yes", "list": {}, "nested": [1, "a"]})");
  EXPECT_EQ(GetInt(j, "pp", "pp", 1, 4096).status().message(), "field 'pp': expected an integer in [1, 4096], got -1");
  EXPECT_EQ(GetInt(j, "x", "x", 0, 9).status().message(), "field 'x': expected an integer, got 1.5");
  EXPECT_EQ(GetInt(j, "absent", "a.absent", 0, 9).status().message(), "field 'a.absent': missing");
  EXPECT_EQ(GetNumber(j, "x", "x", 2, 3).status().message(), "field 'x': expected a number in [2, 3], got 1.5");
  EXPECT_EQ(GetString(j, "name", "name", 10).status().message(), "field 'name': expected a string, got 7");
  EXPECT_EQ(GetBool(j, "ok", "ok").status().message(), "field 'ok': expected true or false, got \"yes\"");
  EXPECT_EQ(GetArray(j, "list", "list").status().message(), "field 'list': expected an array, got {}");
  const Json& nested = j["nested"];
  EXPECT_EQ(ReadInt(nested[1], FieldPath("nested", 1), 0, 9).status().message(),
            "field 'nested[1]': expected an integer, got \"a\"");
  EXPECT_EQ(*ReadInt(nested[0], FieldPath("nested", size_t{0}), 0, 9), 1);
  EXPECT_EQ(FieldPath("", "a"), "a");
  EXPECT_EQ(FieldPath("a", "b"), "a.b");
  EXPECT_EQ(GetField(nested, "k", "nested.k").status().message(),
            "field 'nested.k': expected an object around it, got [1,\"a\"]");
}

TEST(JsonFields, OptionalFieldsAndLongValues) {
  const Json j = Json::parse(R"({"n": null, "s": "abcdef", "big": 1e300})");
  EXPECT_FALSE(GetOptionalInt(j, "n", "n", 0, 1)->has_value());
  EXPECT_FALSE(GetOptionalNumber(j, "missing", "missing", 0, 1)->has_value());
  EXPECT_EQ(GetString(j, "s", "s", 3).status().message(), "field 's': longer than 3 characters");
  EXPECT_EQ(GetInt(j, "big", "big", 0, 10).status().message(), "field 'big': expected an integer, got 1e+300");
  EXPECT_EQ(ParseJsonObject("[1]").status().message(), "body: expected a JSON object, got [1]");
  EXPECT_EQ(ParseJsonObject("{\"a\": ").status().message(), "body: malformed JSON at byte 7");
  // Was an uncaught out_of_range: a 500 from the server.
  EXPECT_EQ(ParseJsonObject("{\"microbatches\": 1e400}").status().message(), "body: number overflow parsing '1e400'");
  EXPECT_EQ(ParseJsonObject("{\"microbatches\": 1e400}").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(ParseJsonObject("x", "request").status().message(), "request: malformed JSON at byte 1");
}

// Two values for one key would otherwise be read as the last, silently; the
// same key in different objects is fine.
TEST(JsonFields, AKeyGivenTwiceInOneObjectIsRefused) {
  EXPECT_EQ(ParseJsonObject(R"({"pp": 4, "pp": 8})").status().message(), "field 'pp': given twice in one object");
  EXPECT_EQ(ParseJsonObject(R"({"a": {"k": 1}, "b": [{"k": 1}, [0, 0], 7, {"k": 2, "k": 3}]})").status().message(),
            "field 'b[3].k': given twice in one object");
  EXPECT_EQ(ParseJsonObject(R"({"carbon": {"zone": "a", "zone": "b"}})").status().message(),
            "field 'carbon.zone': given twice in one object");
  Result<Json> fine = ParseJsonObject(R"({"a": {"k": 1}, "b": [{"k": 1}, {"k": 2}], "k": 0})");
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_EQ((*fine)["b"][1]["k"], 2);
}

// Messages quote values; a long one is cut without splitting a character, so
// the message can itself be sent as JSON.
TEST(JsonFields, QuotesAreShortAndValidUtf8) {
  const Json accents = std::string(36, 'a') + "\u00e9\u00e9\u00e9";
  const std::string quoted = Quote(accents);
  EXPECT_EQ(quoted, "\"" + std::string(36, 'a') + "...");
  EXPECT_NO_THROW(Json(quoted).dump());
  EXPECT_NO_THROW(Quote(Json(std::string("\xff\xfe"))));
}

}  // namespace
}  // namespace perseus

// Typed reads of JSON fields with errors that name the field: the one JSON
// reader of the project. The server reads requests with it, the rank client
// the server's replies, frontier_io plans.json; an error always reads
// "field 'pp': expected an integer in [1, 4096], got -1", so the caller (the
// HTTP layer, a file reader) can add where the document came from.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "perseus/status.h"

namespace perseus {

using Json = nlohmann::json;

// "field 'a.b': <what>".
Status FieldError(const std::string& field, const std::string& what);
// The JSON text of `value`, shortened to 40 characters for messages; never
// throws (invalid UTF-8 is replaced, no character is cut in two).
std::string Quote(const Json& value);

// REQUIRES: `object` is a JSON object. Absent fields are errors unless the
// helper returns an optional. `path` is the field's full name in messages.
Result<int64_t> GetInt(const Json& object, const std::string& key, const std::string& path, int64_t min_value,
                       int64_t max_value);
Result<std::optional<int64_t>> GetOptionalInt(const Json& object, const std::string& key, const std::string& path,
                                              int64_t min_value, int64_t max_value);
Result<double> GetNumber(const Json& object, const std::string& key, const std::string& path, double min_value,
                         double max_value);
Result<std::optional<double>> GetOptionalNumber(const Json& object, const std::string& key, const std::string& path,
                                               double min_value, double max_value);
Result<std::string> GetString(const Json& object, const std::string& key, const std::string& path,
                              size_t max_length);
Result<bool> GetBool(const Json& object, const std::string& key, const std::string& path);
// The field itself, which must be present (and of the kind named).
Result<const Json*> GetField(const Json& object, const std::string& key, const std::string& path);
Result<const Json*> GetObject(const Json& object, const std::string& key, const std::string& path);
Result<const Json*> GetArray(const Json& object, const std::string& key, const std::string& path);

// "field '<path>.<key>': unknown field" for the first member of `object` not
// in `known` (a misspelt name would otherwise be ignored and its default
// used). `path` is the object's own name ("" for a body's top level).
Status CheckKnownFields(const Json& object, const std::string& path, std::initializer_list<const char*> known);

// The same checks on a value already found (an array element).
Result<int64_t> ReadInt(const Json& value, const std::string& path, int64_t min_value, int64_t max_value);
Result<double> ReadNumber(const Json& value, const std::string& path, double min_value, double max_value);
Result<std::string> ReadString(const Json& value, const std::string& path, size_t max_length);
// `path` of a member or an element: "a" + "b" -> "a.b", "a" + 3 -> "a[3]".
std::string FieldPath(const std::string& path, const std::string& key);
std::string FieldPath(const std::string& path, size_t index);
// The path ("state.carbon.plan_power_w[3]") of the first NaN or infinity in
// `value`, or nullopt when every number is finite.
std::optional<std::string> FindNonFinite(const Json& value, const std::string& path);
// nlohmann's message of `e` without its "[json.exception.type_error.302] " prefix.
std::string JsonErrorText(const Json::exception& e);
// Parses one JSON object (a request body, a daemon request line). Errors name
// `what` and the byte offset of a syntax error; a key given twice in one
// object is an error naming it, not a silent "last one wins".
Result<Json> ParseJsonObject(std::string_view text, const std::string& what = "body");

}  // namespace perseus

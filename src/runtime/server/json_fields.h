// Typed reads of JSON request fields with errors that name the field.
//
// Every value a client sends goes through these helpers, so an error always
// reads "field 'pp': expected a positive integer, got -1" and the HTTP layer
// can report which field was wrong. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "perseus/status.h"

namespace perseus::server {

using Json = nlohmann::json;

// "field 'a.b': <what>".
Status FieldError(const std::string& field, const std::string& what);
// The JSON text of `value`, shortened to 40 characters for messages.
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
// The path ("state.carbon.plan_power_w[3]") of the first NaN or infinity in
// `value`, or nullopt when every number is finite.
std::optional<std::string> FindNonFinite(const Json& value, const std::string& path);
// Parses a request body; the error names the byte offset of the syntax error.
Result<Json> ParseJsonObject(const std::string& body);

}  // namespace perseus::server

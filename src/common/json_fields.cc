#include "common/json_fields.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/strings.h"

namespace perseus {

Status FieldError(const std::string& field, const std::string& what) {
  return Status::InvalidArgument("field '" + field + "': " + what);
}

std::string Quote(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  return text.size() <= 40 ? text : CutText(text, 37);
}

namespace {

std::string Range(double lo, double hi) {
  auto fmt = [](double v) {
    Json j = v;
    if (v == std::floor(v) && std::fabs(v) < 1e15) j = static_cast<int64_t>(v);
    return j.dump();
  };
  return "[" + fmt(lo) + ", " + fmt(hi) + "]";
}

Result<int64_t> ToInt(const Json& v, const std::string& path, int64_t lo, int64_t hi) {
  if (!v.is_number_integer() && !(v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
                                   std::fabs(v.get<double>()) < 9e15)) {
    return FieldError(path, "expected an integer, got " + Quote(v));
  }
  int64_t x = v.is_number_float() ? static_cast<int64_t>(v.get<double>()) : v.get<int64_t>();
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) x = INT64_MAX;
  if (x < lo || x > hi) {
    return FieldError(path, "expected an integer in " + Range(lo, hi) + ", got " + Quote(v));
  }
  return x;
}

Result<double> ToNumber(const Json& v, const std::string& path, double lo, double hi) {
  if (!v.is_number()) return FieldError(path, "expected a number, got " + Quote(v));
  double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) {
    return FieldError(path, "expected a number in " + Range(lo, hi) + ", got " + Quote(v));
  }
  return x;
}

}  // namespace

Result<int64_t> ReadInt(const Json& value, const std::string& path, int64_t min_value, int64_t max_value) {
  return ToInt(value, path, min_value, max_value);
}

Result<double> ReadNumber(const Json& value, const std::string& path, double min_value, double max_value) {
  return ToNumber(value, path, min_value, max_value);
}

Result<std::string> ReadString(const Json& value, const std::string& path, size_t max_length) {
  if (!value.is_string()) return FieldError(path, "expected a string, got " + Quote(value));
  const std::string& s = value.get_ref<const std::string&>();
  if (s.size() > max_length) return FieldError(path, "longer than " + std::to_string(max_length) + " characters");
  return s;
}

std::string FieldPath(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string FieldPath(const std::string& path, size_t index) { return path + "[" + std::to_string(index) + "]"; }

Result<const Json*> GetField(const Json& object, const std::string& key, const std::string& path) {
  if (!object.is_object()) return FieldError(path, "expected an object around it, got " + Quote(object));
  auto it = object.find(key);
  if (it == object.end()) return FieldError(path, "missing");
  return &*it;
}

Result<const Json*> GetObject(const Json& object, const std::string& key, const std::string& path) {
  Result<const Json*> v = GetField(object, key, path);
  if (v.ok() && !(*v)->is_object()) return FieldError(path, "expected an object, got " + Quote(**v));
  return v;
}

Result<const Json*> GetArray(const Json& object, const std::string& key, const std::string& path) {
  Result<const Json*> v = GetField(object, key, path);
  if (v.ok() && !(*v)->is_array()) return FieldError(path, "expected an array, got " + Quote(**v));
  return v;
}

Result<bool> GetBool(const Json& object, const std::string& key, const std::string& path) {
  Result<const Json*> v = GetField(object, key, path);
  if (!v.ok()) return v.status();
  if (!(*v)->is_boolean()) return FieldError(path, "expected true or false, got " + Quote(**v));
  return (*v)->get<bool>();
}

Result<int64_t> GetInt(const Json& object, const std::string& key, const std::string& path, int64_t min_value,
                       int64_t max_value) {
  if (!object.is_object()) return FieldError(path, "expected an object around it, got " + Quote(object));
  auto it = object.find(key);
  if (it == object.end()) return FieldError(path, "missing");
  return ToInt(*it, path, min_value, max_value);
}

Result<std::optional<int64_t>> GetOptionalInt(const Json& object, const std::string& key, const std::string& path,
                                              int64_t min_value, int64_t max_value) {
  if (!object.is_object()) return FieldError(path, "expected an object around it, got " + Quote(object));
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<int64_t>();
  Result<int64_t> v = ToInt(*it, path, min_value, max_value);
  if (!v.ok()) return v.status();
  return std::optional<int64_t>(*v);
}

Result<double> GetNumber(const Json& object, const std::string& key, const std::string& path, double min_value,
                         double max_value) {
  if (!object.is_object()) return FieldError(path, "expected an object around it, got " + Quote(object));
  auto it = object.find(key);
  if (it == object.end()) return FieldError(path, "missing");
  return ToNumber(*it, path, min_value, max_value);
}

Result<std::optional<double>> GetOptionalNumber(const Json& object, const std::string& key, const std::string& path,
                                               double min_value, double max_value) {
  if (!object.is_object()) return FieldError(path, "expected an object around it, got " + Quote(object));
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<double>();
  Result<double> v = ToNumber(*it, path, min_value, max_value);
  if (!v.ok()) return v.status();
  return std::optional<double>(*v);
}

Result<std::string> GetString(const Json& object, const std::string& key, const std::string& path,
                              size_t max_length) {
  if (!object.is_object()) return FieldError(path, "expected an object around it, got " + Quote(object));
  auto it = object.find(key);
  if (it == object.end()) return FieldError(path, "missing");
  return ReadString(*it, path, max_length);
}

Status CheckKnownFields(const Json& object, const std::string& path, std::initializer_list<const char*> known) {
  if (!object.is_object()) return Status::Ok();  // the typed reads say what it should be
  for (const auto& [key, value] : object.items()) {
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
      return FieldError(path.empty() ? key : FieldPath(path, key), "unknown field");
    }
  }
  return Status::Ok();
}

std::string JsonErrorText(const Json::exception& e) {
  const std::string message = e.what();
  const size_t bracket = message.find("] ");
  return bracket == std::string::npos ? message : message.substr(bracket + 2);
}

Result<Json> ParseJsonObject(std::string_view text, const std::string& what) {
  // The objects and arrays being read, innermost last, with the keys seen
  // and where each is: a key given twice would otherwise be read as its last
  // value, silently. The error names its full path ("carbon.zone").
  struct Open {
    bool array = false;
    std::string key;   // an object's current member
    size_t index = 0;  // an array's current element
    std::vector<std::string> keys;  // a few per object: a linear search beats a set's allocations
  };
  std::vector<Open> open;
  std::optional<std::string> duplicate;
  auto path_to = [&open](const std::string& key) {
    std::string path;
    for (size_t i = 0; i + 1 < open.size(); ++i) {
      path = open[i].array ? FieldPath(path, open[i].index) : FieldPath(path, open[i].key);
    }
    return FieldPath(path, key);
  };
  auto element_done = [&open] {
    if (!open.empty() && open.back().array) ++open.back().index;
  };
  const Json::parser_callback_t track_keys = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start: open.push_back(Open{}); break;
      case Json::parse_event_t::array_start: open.push_back(Open{true, "", 0, {}}); break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        open.pop_back();
        element_done();
        break;
      case Json::parse_event_t::value: element_done(); break;
      case Json::parse_event_t::key: {
        Open& object = open.back();
        object.key = parsed.get_ref<const std::string&>();
        if (!duplicate && std::find(object.keys.begin(), object.keys.end(), object.key) != object.keys.end()) {
          duplicate = path_to(object.key);
        }
        object.keys.push_back(object.key);
        break;
      }
    }
    return true;
  };
  Json j;
  try {
    j = Json::parse(text.begin(), text.end(), track_keys);
  } catch (const Json::parse_error& e) {
    return Status::InvalidArgument(what + ": malformed JSON at byte " + std::to_string(e.byte));
  } catch (const Json::out_of_range& e) {
    // A number beyond a double's range, such as 1e400 (nlohmann's 406).
    return Status::InvalidArgument(what + ": " + JsonErrorText(e));
  }
  if (duplicate) return FieldError(*duplicate, "given twice in one object");
  if (!j.is_object()) return Status::InvalidArgument(what + ": expected a JSON object, got " + Quote(j));
  return j;
}

std::optional<std::string> FindNonFinite(const Json& value, const std::string& path) {
  if (value.is_number_float()) {
    return std::isfinite(value.get<double>()) ? std::nullopt : std::optional<std::string>(path);
  }
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (std::optional<std::string> at = FindNonFinite(it.value(), path + "." + it.key())) return at;
    }
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      if (std::optional<std::string> at = FindNonFinite(value[i], path + "[" + std::to_string(i) + "]")) return at;
    }
  }
  return std::nullopt;
}

}  // namespace perseus

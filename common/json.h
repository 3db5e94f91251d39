// A minimal JSON object writer for metrics lines and run-directory files.
// Thread-safety: not thread-safe; one writer per thread.
#ifndef LOCKSTEP_COMMON_JSON_H_
#define LOCKSTEP_COMMON_JSON_H_

#include <cstdint>
#include <string>
#include <vector>

namespace lockstep {

// Escapes `text` as a JSON string literal, quotes included.
std::string JsonQuote(const std::string& text);

// Builds one flat or nested JSON object: {"a":1,"b":"x"}.
class JsonObject {
 public:
  JsonObject& Add(const std::string& key, const std::string& value);
  JsonObject& Add(const std::string& key, const char* value);
  JsonObject& Add(const std::string& key, double value);
  JsonObject& Add(const std::string& key, int64_t value);
  JsonObject& Add(const std::string& key, uint64_t value);
  JsonObject& Add(const std::string& key, int value);
  JsonObject& Add(const std::string& key, uint32_t value);
  JsonObject& Add(const std::string& key, bool value);
  // Adds a value that is already JSON text (an object or array).
  JsonObject& AddRaw(const std::string& key, const std::string& json);
  JsonObject& AddNull(const std::string& key);
  std::string str() const { return "{" + body_ + "}"; }

 private:
  void Key(const std::string& key);
  std::string body_;
};

// A JSON array of numbers.
std::string JsonArray(const std::vector<uint32_t>& values);
std::string JsonArray(const std::vector<double>& values);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_JSON_H_

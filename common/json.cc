#include "common/json.h"

#include <cmath>
#include <cstdio>

namespace lockstep {
namespace {

std::string Number(double value) {
  if (!std::isfinite(value)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.9g", value);
  return buf;
}

}  // namespace

std::string JsonQuote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

void JsonObject::Key(const std::string& key) {
  if (!body_.empty()) body_ += ",";
  body_ += JsonQuote(key) + ":";
}

JsonObject& JsonObject::Add(const std::string& key, const std::string& v) {
  Key(key);
  body_ += JsonQuote(v);
  return *this;
}
JsonObject& JsonObject::Add(const std::string& key, const char* v) {
  return Add(key, std::string(v));
}
JsonObject& JsonObject::Add(const std::string& key, double v) {
  Key(key);
  body_ += Number(v);
  return *this;
}
JsonObject& JsonObject::Add(const std::string& key, int64_t v) {
  Key(key);
  body_ += std::to_string(v);
  return *this;
}
JsonObject& JsonObject::Add(const std::string& key, uint64_t v) {
  Key(key);
  body_ += std::to_string(v);
  return *this;
}
JsonObject& JsonObject::Add(const std::string& key, int v) {
  return Add(key, static_cast<int64_t>(v));
}
JsonObject& JsonObject::Add(const std::string& key, uint32_t v) {
  return Add(key, static_cast<uint64_t>(v));
}
JsonObject& JsonObject::Add(const std::string& key, bool v) {
  Key(key);
  body_ += v ? "true" : "false";
  return *this;
}
JsonObject& JsonObject::AddRaw(const std::string& key,
                               const std::string& json) {
  Key(key);
  body_ += json;
  return *this;
}
JsonObject& JsonObject::AddNull(const std::string& key) {
  Key(key);
  body_ += "null";
  return *this;
}

std::string JsonArray(const std::vector<uint32_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(values[i]);
  }
  return out + "]";
}

std::string JsonArray(const std::vector<double>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += Number(values[i]);
  }
  return out + "]";
}

}  // namespace lockstep

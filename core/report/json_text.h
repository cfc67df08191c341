// Appending JSON text to a string without building a document: for outputs of hundreds of
// thousands of entries (inspect --json's tensors), where a DOM costs more in allocations than the
// work itself. Strings are escaped as RFC 8259 and nlohmann::json's dump do it (", \ and control
// characters; UTF-8 passes through); tests parse the result and compare it with the DOM.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ws::jsontext {

void appendString(std::string& out, std::string_view s);
void appendUint(std::string& out, uint64_t v);
void appendInt(std::string& out, int64_t v);

// One JSON object written field by field: {"a":1,"b":"x"}.
class Object {
 public:
  explicit Object(std::string& out) : out_(out) { out_ += '{'; }
  ~Object() { out_ += '}'; }
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  Object& string(const char* key, std::string_view v) {
    this->key(key);
    appendString(out_, v);
    return *this;
  }
  Object& uint(const char* key, uint64_t v) {
    this->key(key);
    appendUint(out_, v);
    return *this;
  }
  // A non-negative integer, or null for a negative one (an index that is not there).
  Object& indexOrNull(const char* key, int64_t v) {
    this->key(key);
    if (v < 0) out_ += "null";
    else appendInt(out_, v);
    return *this;
  }
  Object& boolean(const char* key, bool v) {
    this->key(key);
    out_ += v ? "true" : "false";
    return *this;
  }
  Object& null(const char* key) {
    this->key(key);
    out_ += "null";
    return *this;
  }
  template <class It>
  Object& uints(const char* key, It begin, It end) {
    this->key(key);
    out_ += '[';
    for (It it = begin; it != end; ++it) {
      if (it != begin) out_ += ',';
      appendUint(out_, uint64_t(*it));
    }
    out_ += ']';
    return *this;
  }
  // A value already written as JSON text.
  Object& raw(const char* key, std::string_view json) {
    this->key(key);
    out_ += json;
    return *this;
  }

 private:
  void key(const char* k) {
    if (!first_) out_ += ',';
    first_ = false;
    out_ += '"';
    out_ += k;  // keys are this program's own identifiers: nothing to escape
    out_ += "\":";
  }
  std::string& out_;
  bool first_ = true;
};

}  // namespace ws::jsontext

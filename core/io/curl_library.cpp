#include "core/io/curl_library.h"

#include <dlfcn.h>

namespace ws {

namespace {

// libcurl's ABI since 7.16 (2006); Debian's libcurl4 and libcurl4t64 both ship it.
constexpr const char* kSoname = "libcurl.so.4";

struct Loaded {
  CurlLibrary library;
  std::string problem;  // empty once loaded
};

template <class Fn>
void resolve(void* handle, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(::dlsym(handle, name));
  if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
}

Loaded load() {
  Loaded out;
  void* handle = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    out.problem = std::string("HTTP needs libcurl, which could not be loaded (") + (why ? why : kSoname) + ")";
    return out;
  }
  CurlLibrary& c = out.library;
  std::string missing;
#define WS_CURL_RESOLVE(name) resolve(handle, "curl_" #name, c.name, missing);
  WS_CURL_FUNCTIONS(WS_CURL_RESOLVE)
#undef WS_CURL_RESOLVE
  decltype(&::curl_global_init) globalInit = nullptr;
  resolve(handle, "curl_global_init", globalInit, missing);
  if (!missing.empty()) {
    out.problem = std::string("HTTP needs libcurl, and ") + kSoname + " lacks " + missing;
    return out;
  }
  if (globalInit(CURL_GLOBAL_DEFAULT) != CURLE_OK) out.problem = "HTTP needs libcurl, which failed to initialise";
  return out;
}

const Loaded& loaded() {
  static const Loaded l = load();  // a static's initialisation runs once, on one thread
  return l;
}

}  // namespace

const CurlLibrary* curlLibrary() { return loaded().problem.empty() ? &loaded().library : nullptr; }

const std::string& curlProblem() { return loaded().problem; }

}  // namespace ws

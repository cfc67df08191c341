// libcurl, opened the first time a URL is read (dlopen of its soname) rather than linked. Linked,
// it brings ~25 libraries (TLS, Kerberos, LDAP, IDN, ...) into every start of the binary: 6.3 of
// the 13 ms of `weightscope --version` on the development machine, for the few runs that read a
// URL (docs/benchmarks.md). The functions http_client.cpp calls, with libcurl's own names. Called
// through these pointers, curl_easy_setopt's compile-time type checks (typecheck-gcc.h) do not
// apply: a long option must be given a long, a callback a function of libcurl's signature.
#pragma once

#include <curl/curl.h>

#include <string>

namespace ws {

// The one list of them: a member of CurlLibrary each, resolved by name (curl_library.cpp).
#define WS_CURL_FUNCTIONS(X)                                                                                      \
  X(easy_init) X(easy_reset) X(easy_setopt) X(easy_perform) X(easy_getinfo) X(easy_strerror) X(easy_cleanup) \
  X(share_init) X(share_setopt) X(share_cleanup) X(slist_append) X(slist_free_all)

struct CurlLibrary {
#define WS_CURL_MEMBER(name) decltype(&::curl_##name) name = nullptr;
  WS_CURL_FUNCTIONS(WS_CURL_MEMBER)
#undef WS_CURL_MEMBER
};

// The library, opened and initialised (curl_global_init) on the first call, by one thread as
// libcurl asks; never closed. Null when it cannot be opened: curlProblem() says why.
const CurlLibrary* curlLibrary();
const std::string& curlProblem();

}  // namespace ws

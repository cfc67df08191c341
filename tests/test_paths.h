// Where the tests find what lies outside the build: the shared fixtures and the source tree.
// Plain C++ (tst_gpu has no Qt). The two paths are compiled into one generated file
// (test_paths.cpp.in) rather than given to every test as -D flags, so that a clone of the same
// sources in another folder compiles every other file to the same command line and hits the
// compiler cache (scripts/test.sh, README "Compiler cache").
#pragma once

#include <string>
#include <string_view>

namespace wstest {

// ../shared/fixtures as configured (WEIGHTSCOPE_FIXTURES at configure time); the environment's
// WEIGHTSCOPE_FIXTURES takes precedence where the tests read it (fixtures()).
const char* configuredFixtures();
// The source tree's root, for tests that read its docs and checked-in data. WEIGHTSCOPE_SOURCE_DIR in the
// environment takes precedence (a test program run in another copy of the tree).
std::string sourceDir();
// A checked-in file or folder under tests/data (the real writers' outputs the tests read).
inline std::string trackedData(std::string_view rel) { return sourceDir() + "/tests/data/" + std::string(rel); }

}  // namespace wstest

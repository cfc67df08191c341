#include "app/cli/distributed.h"

#include <iostream>

namespace ws::cli {

std::unique_ptr<dist::Communicator> joinOrReport(const char* command) {
  auto comm = dist::joinMpi();
  if (!comm) {
    std::cerr << "weightscope " << command << " --distributed: " << comm.error().message << "\n";
    return nullptr;
  }
  return std::move(comm.value());
}

}  // namespace ws::cli

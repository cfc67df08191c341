#include "app/cli/distributed.h"

#include <iostream>

#include "core/formats/remote_open.h"

namespace ws::cli {

std::unique_ptr<dist::Communicator> joinOrReport(const char* command) {
  auto comm = dist::joinMpi();
  if (!comm) {
    std::cerr << "weightscope " << command << " --distributed: " << comm.error().message << "\n";
    return nullptr;
  }
  remoteOptions().rank = comm.value()->rank();  // a remote checkpoint: this rank's own mirror
  return std::move(comm.value());
}

}  // namespace ws::cli

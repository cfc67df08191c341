// The processes of one job working together: the EP ranks of a distributed load, the shares of a
// distributed value scan (docs/distributed.md). What the commands need and no more: who am I,
// everyone's results at every rank, and a way to stop the whole job. MPI provides it under
// mpirun or Slurm's srun (mpi_communicator.cpp); the launcher, host files and transports are MPI's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/util/error.h"

namespace ws::dist {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The rank among the processes on this node (MPI-3's shared-memory communicator): which GPU
  // of the node this process takes.
  virtual int localRank() const = 0;
  virtual std::string host() const = 0;
  // Every rank's bytes, in rank order, at every rank (a collective: every rank must call it).
  virtual std::vector<std::string> allGather(const std::string& mine) = 0;
  // Ends every process of the job with `code`: a rank that cannot reach the next collective
  // must not leave the others waiting in it.
  [[noreturn]] virtual void abort(int code) = 0;
};

// Whether this build has MPI (WEIGHTSCOPE_MPI: Open MPI found at configure time).
bool mpiBuilt();

// Joins the MPI job this process was started in (MPI_Init; MPI_Finalize when it is destroyed).
// Started without a launcher, the process is rank 0 of 1. Without MPI in the build: an error
// saying so.
Result<std::unique_ptr<Communicator>> joinMpi();

// The contiguous run [begin, end) of items that rank `rank` of `size` takes, the items weighted
// by their bytes: item i goes to the rank whose equal share of the total holds the middle of
// its bytes, so each rank's share is within one item of total / size. Every rank computes the
// same split from the same catalog; no message is needed.
std::pair<size_t, size_t> shareByBytes(const std::vector<uint64_t>& bytes, int rank, int size);

}  // namespace ws::dist

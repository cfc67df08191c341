#include "core/dist/communicator.h"

#include <climits>
#include <cstdio>
#include <cstdlib>

#ifdef WEIGHTSCOPE_HAVE_MPI
#include <mpi.h>
#endif

namespace ws::dist {

#ifdef WEIGHTSCOPE_HAVE_MPI

namespace {

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator() {
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready) MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &localRank_);
    MPI_Comm_free(&node);
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int n = 0;
    MPI_Get_processor_name(name, &n);
    host_.assign(name, size_t(n));
  }
  ~MpiCommunicator() override {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int localRank() const override { return localRank_; }
  std::string host() const override { return host_; }

  std::vector<std::string> allGather(const std::string& mine) override {
    // Lengths first, then the bytes; MPI counts are ints, so the gathered total stays under 2 GiB
    // (a rank's result is a summary: kilobytes to a few megabytes).
    if (mine.size() > size_t(INT_MAX)) abortWith("a rank's result is over 2 GiB");
    const int n = int(mine.size());
    std::vector<int> counts(static_cast<size_t>(size_)), offsets(static_cast<size_t>(size_));
    MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    long long total = 0;
    for (int r = 0; r < size_; ++r) offsets[size_t(r)] = int(total), total += counts[size_t(r)];
    if (total > INT_MAX) abortWith("the ranks' results are over 2 GiB together");
    std::string all(size_t(total), '\0');
    MPI_Allgatherv(mine.data(), n, MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (int r = 0; r < size_; ++r) out.push_back(all.substr(size_t(offsets[size_t(r)]), size_t(counts[size_t(r)])));
    return out;
  }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; should it, still end this process
  }

 private:
  [[noreturn]] void abortWith(const char* why) {
    std::fprintf(stderr, "weightscope (rank %d): %s\n", rank_, why);
    abort(2);
  }
  int rank_ = 0, size_ = 1, localRank_ = 0;
  std::string host_;
};

}  // namespace

bool mpiBuilt() { return true; }

Result<std::unique_ptr<Communicator>> joinMpi() { return std::unique_ptr<Communicator>(std::make_unique<MpiCommunicator>()); }

#else

bool mpiBuilt() { return false; }

Result<std::unique_ptr<Communicator>> joinMpi() {
  return Error{ErrorCode::Usage, "this build has no MPI (Open MPI was not found when it was configured): --distributed needs libopenmpi-dev at build time",
               {}, std::nullopt, {}};
}

#endif

}  // namespace ws::dist

// weightscope synth --like FAMILY --scheme SCHEME [--size tiny|full] [dims...] [--sparse] OUT
#include <iostream>

#include "app/cli/command.h"
#include "core/util/format_bytes.h"
#include "core/synth/synth.h"

namespace ws::cli {

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "|") + x;
  return s;
}

class SynthCommand : public Command {
 public:
  std::string name() const override { return "synth"; }
  std::string summary() const override { return "write a synthetic checkpoint shaped like a real model family"; }
  std::string usage() const override {
    return "usage: weightscope synth --like FAMILY --scheme SCHEME [options] OUT\n"
           "  --like     " + joined(synth::families()) + "\n"
           "  --scheme   " + joined(synth::schemes()) + "\n"
           "  --size     tiny (default, a few MiB) | full (the published model's dimensions)\n"
           "  --layers N --experts E --hidden H --intermediate I (expert) --dense-intermediate D\n"
           "  --shared S --dense-layers K --vocab V --mtp M --shards N --numa-nodes N (kt-int8)\n"
           "  --sparse   write real headers (and weight_shape values) over sparse (hole) data:\n"
           "             a full-size checkpoint costs only its header bytes on disk\n"
           "  --seed N   seed of the deterministic tensor contents (default 1)\n"
           "  OUT        a new or empty folder; nothing is written anywhere else\n";
  }
  int run(const std::vector<std::string>& argv) override {
    Args a(argv,
           {"like", "scheme", "size", "layers", "experts", "hidden", "intermediate", "dense-intermediate", "shared", "dense-layers", "vocab",
            "mtp", "shards", "numa-nodes", "seed"},
           {"sparse"});
    if (a.positional().size() != 1 || !a.has("like") || !a.has("scheme")) {
      std::cerr << usage();
      return kExitCannotRun;
    }
    synth::Options o;
    o.like = a.get("like");
    o.scheme = a.get("scheme");
    o.size = a.get("size", "tiny");
    o.layers = a.getInt("layers", -1);
    o.experts = a.getInt("experts", -1);
    o.hidden = a.getInt("hidden", -1);
    o.expertIntermediate = a.getInt("intermediate", -1);
    o.denseIntermediate = a.getInt("dense-intermediate", -1);
    o.sharedExperts = a.getInt("shared", -1);
    o.denseLayers = a.getInt("dense-layers", -1);
    o.vocab = a.getInt("vocab", -1);
    o.mtpLayers = a.getInt("mtp", -1);
    o.shards = a.getInt("shards", -1);
    o.numaNodes = a.getInt("numa-nodes", -1);
    o.seed = uint64_t(a.getInt("seed", 1));
    o.sparse = a.has("sparse");
    o.out = a.positional()[0];
    auto r = synth::write(o);
    if (!r) {
      std::cerr << "weightscope synth: " << r.error().describe() << "\n";
      return kExitCannotRun;
    }
    const auto& s = r.value();
    std::cout << "wrote " << o.out << ": " << s.files.size() << " files, " << formatCount(s.tensors) << " tensors, " << formatBytes(s.dataBytes)
              << " of tensor data" << (o.sparse ? " (sparse)" : "") << "\n";
    return kExitOk;
  }
};

}  // namespace

void registerSynth(CommandRegistry& r) { r.add(std::make_unique<SynthCommand>()); }

}  // namespace ws::cli

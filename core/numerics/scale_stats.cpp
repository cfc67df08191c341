#include "core/numerics/scale_stats.h"

#include <cstring>
#include <set>

#include "core/model/quant_scheme.h"
#include "core/numerics/element_reader.h"
#include "core/numerics/float_formats.h"

namespace ws::num {

namespace {

inline float f16At(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return halfToFloat(v);
}

// Emits the scales stored inside one GGUF block and returns how many bytes it read.
template <class Emit>
uint64_t ggufBlockScales(int id, const uint8_t* b, Emit&& emit) {
  auto kScales = [&](const uint8_t* q, float d, float dmin) {  // Q4_K / Q5_K packed 6-bit scales
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      if (j < 4) sc = q[j] & 63, m = q[j + 4] & 63;
      else sc = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4)), m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
      emit("sub_scale", d * float(sc));
      emit("sub_min", dmin * float(m));
    }
  };
  switch (id) {
    case 2: case 6: case 8: case 20: case 41: case 42:  // Q4_0 Q5_0 Q8_0 IQ4_NL Q1_0 Q2_0: d first
      emit("d", f16At(b));
      return 2;
    case 3: case 7: case 9:  // Q4_1 Q5_1 Q8_1: d, then m (or s)
      emit("d", f16At(b));
      emit("dmin", f16At(b + 2));
      return 4;
    case 10: {  // Q2_K: scales[16] at 0, d at 80, dmin at 82
      const float d = f16At(b + 80), dmin = f16At(b + 82);
      emit("d", d);
      emit("dmin", dmin);
      for (int i = 0; i < 16; ++i) emit("sub_scale", d * float(b[i] & 0xF)), emit("sub_min", dmin * float(b[i] >> 4));
      return 20;
    }
    case 11: {  // Q3_K: 12 bytes of 6-bit scales at 96, d at 108
      const float d = f16At(b + 108);
      emit("d", d);
      uint32_t aux[4];
      std::memcpy(aux, b + 96, 12);
      const uint32_t k1 = 0x03030303, k2 = 0x0f0f0f0f, tmp = aux[2];
      aux[2] = ((aux[0] >> 4) & k2) | (((tmp >> 4) & k1) << 4);
      aux[3] = ((aux[1] >> 4) & k2) | (((tmp >> 6) & k1) << 4);
      aux[0] = (aux[0] & k2) | (((tmp >> 0) & k1) << 4);
      aux[1] = (aux[1] & k2) | (((tmp >> 2) & k1) << 4);
      int8_t sc[16];
      std::memcpy(sc, aux, 16);
      for (int i = 0; i < 16; ++i) emit("sub_scale", d * float(sc[i] - 32));
      return 14;
    }
    case 12: case 13: {  // Q4_K Q5_K: d, dmin, scales[12]
      const float d = f16At(b), dmin = f16At(b + 2);
      emit("d", d);
      emit("dmin", dmin);
      kScales(b + 4, d, dmin);
      return 16;
    }
    case 14: {  // Q6_K: int8 scales[16] at 192, d at 208
      const float d = f16At(b + 208);
      emit("d", d);
      for (int i = 0; i < 16; ++i) emit("sub_scale", d * float(int8_t(b[192 + i])));
      return 18;
    }
    case 15: {  // Q8_K: f32 d
      float d;
      std::memcpy(&d, b, 4);
      emit("d", d);
      return 4;
    }
    case 23: {  // IQ4_XS: d, scales_h, scales_l[4]
      const float d = f16At(b);
      emit("d", d);
      uint16_t sh;
      std::memcpy(&sh, b + 2, 2);
      for (int ib = 0; ib < 8; ++ib) {
        const int ls = ((b[4 + ib / 2] >> 4 * (ib % 2)) & 0xF) | (((sh >> 2 * ib) & 3) << 4);
        emit("sub_scale", d * float(ls - 32));
      }
      return 8;
    }
    case 34: emit("d", f16At(b + 52)); return 2;  // TQ1_0
    case 35: emit("d", f16At(b + 64)); return 2;  // TQ2_0
    case 39: emit("d", e8m0ToFloat(b[0])); return 1;  // MXFP4: the block's E8M0 exponent
    case 40:  // NVFP4: four UE4M3 sub-block scales
      for (int s = 0; s < 4; ++s) emit("sub_scale", ggmlUe4m3ToFloatHalf(b[s]) * 2.0f);
      return 4;
    default: return 0;
  }
}

std::string groupKey(const Checkpoint& c, const TensorRecord& w, const LogicalTensor& l, ScaleGrouping by) {
  switch (by) {
    case ScaleGrouping::Tensor: return l.name;
    case ScaleGrouping::Layer: return w.layer >= 0 ? "layer " + std::to_string(w.layer) : "(outside layers)";
    case ScaleGrouping::Projection: {
      std::string_view p = projectionName(w.projection);
      return p.empty() ? std::string(roleName(w.role)) : std::string(p);
    }
    case ScaleGrouping::Expert: return w.expert >= 0 ? "expert " + std::to_string(w.expert) : std::string(roleName(w.role));
    case ScaleGrouping::Checkpoint: return "checkpoint";
  }
  return "checkpoint";
}

}  // namespace

Result<ScaleReport> scaleStatistics(const Checkpoint& c, ScaleGrouping by, const std::function<bool(uint64_t, uint64_t)>& progress) {
  return capture([&]() -> ScaleReport {
    ScaleReport rep;
    std::vector<float> buf(1 << 16);
    for (uint64_t li = 0; li < c.logical.size(); ++li) {
      if (progress && !progress(li, c.logical.size())) fail(ErrorCode::Usage, "cancelled");
      const LogicalTensor& l = c.logical[li];
      if (l.weight < 0) continue;
      const TensorRecord& w = c.tensors[uint32_t(l.weight)];
      auto& kinds = rep.groups[groupKey(c, w, l, by)];
      bool any = false;
      if (w.dtype->isBlockQuant()) {
        const uint8_t* p = c.files[w.file].map->bytes().data() + w.offset;
        const uint64_t nblocks = w.bytes / w.dtype->blockBytes;
        std::set<std::string> emitted;
        for (uint64_t i = 0; i < nblocks; ++i)
          rep.bytesRead += ggufBlockScales(w.dtype->ggmlId, p + i * w.dtype->blockBytes, [&](const char* kind, float v) {
            auto& g = kinds[kind];
            g.stats.add(&v, 1);
            g.hist.add(v);
            if (emitted.insert(kind).second) ++g.tensors;
            any = true;
          });
      } else {
        for (uint32_t m : l.members) {
          const TensorRecord& s = c.tensors[m];
          if (s.component != Component::Scale && s.component != Component::GlobalScale) continue;
          ElementReader r;
          // MX scales stored as U8 are E8M0 exponents.
          const DType* dt = (s.dtype->name == "U8" && l.scheme == "mxfp4") ? dtypeFromSafetensors("F8_E8M0") : s.dtype;
          if (!r.init(dt)) continue;
          auto& g = kinds[std::string(componentName(s.component))];
          const uint8_t* p = c.files[s.file].map->bytes().data() + s.offset;
          const uint64_t n = s.elements();
          for (uint64_t i = 0; i < n; i += buf.size()) {
            const uint64_t k = std::min<uint64_t>(buf.size(), n - i);
            r.run(p, i, k, buf.data());
            g.stats.add(buf.data(), k);
            for (uint64_t j = 0; j < k; ++j) g.hist.add(buf[j]);
          }
          rep.bytesRead += s.bytes;
          ++g.tensors;
          any = true;
        }
      }
      if (any) ++rep.logicalTensors;
    }
    return rep;
  });
}

}  // namespace ws::num

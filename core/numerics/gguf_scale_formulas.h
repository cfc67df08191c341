// The scales stored inside one GGUF block - the super-block d and dmin, and the effective
// sub-block scales and mins - for the CPU scale statistics and the GPU kernel alike.
#pragma once

#include "core/numerics/gguf_block_formulas.h"
#include "core/numerics/hd.h"

namespace ws::num {

struct GgufBlockScales {
  float d = 0, dmin = 0;
  bool hasD = false, hasDmin = false;
  float sub[16], subMin[16];
  int nSub = 0, nSubMin = 0;
  uint32_t bytesRead = 0;  // scale bytes of the block actually read
};

WS_HD float hdF16At(const uint8_t* p) { return hdHalfToFloat(uint16_t(p[0] | (p[1] << 8))); }

WS_HD_FN GgufBlockScales ggufBlockScales(int id, const uint8_t* b) {
  GgufBlockScales s;
  auto kScales = [&s](const uint8_t* q, float d, float dmin) {  // Q4_K / Q5_K packed 6-bit scales
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      if (j < 4) sc = q[j] & 63, m = q[j + 4] & 63;
      else sc = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4)), m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
      s.sub[s.nSub++] = d * float(sc);
      s.subMin[s.nSubMin++] = dmin * float(m);
    }
  };
  switch (id) {
    case 2: case 6: case 8: case 20: case 41: case 42:  // Q4_0 Q5_0 Q8_0 IQ4_NL Q1_0 Q2_0: d first
      s.d = hdF16At(b), s.hasD = true, s.bytesRead = 2;
      break;
    case 3: case 7: case 9:  // Q4_1 Q5_1 Q8_1: d, then m (or s)
      s.d = hdF16At(b), s.dmin = hdF16At(b + 2), s.hasD = s.hasDmin = true, s.bytesRead = 4;
      break;
    case 10: {  // Q2_K: scales[16] at 0, d at 80, dmin at 82
      s.d = hdF16At(b + 80), s.dmin = hdF16At(b + 82), s.hasD = s.hasDmin = true;
      for (int i = 0; i < 16; ++i) s.sub[s.nSub++] = s.d * float(b[i] & 0xF), s.subMin[s.nSubMin++] = s.dmin * float(b[i] >> 4);
      s.bytesRead = 20;
      break;
    }
    case 11: {  // Q3_K: 12 bytes of 6-bit scales at 96, d at 108
      s.d = hdF16At(b + 108), s.hasD = true;
      uint32_t aux[4];
      for (int k = 0; k < 3; ++k) aux[k] = uint32_t(b[96 + 4 * k]) | (uint32_t(b[97 + 4 * k]) << 8) | (uint32_t(b[98 + 4 * k]) << 16) | (uint32_t(b[99 + 4 * k]) << 24);
      const uint32_t k1 = 0x03030303, k2 = 0x0f0f0f0f, tmp = aux[2];
      aux[2] = ((aux[0] >> 4) & k2) | (((tmp >> 4) & k1) << 4);
      aux[3] = ((aux[1] >> 4) & k2) | (((tmp >> 6) & k1) << 4);
      aux[0] = (aux[0] & k2) | (((tmp >> 0) & k1) << 4);
      aux[1] = (aux[1] & k2) | (((tmp >> 2) & k1) << 4);
      for (int i = 0; i < 16; ++i) s.sub[s.nSub++] = s.d * float(int8_t((aux[i / 4] >> (8 * (i % 4))) & 0xFF) - 32);
      s.bytesRead = 14;
      break;
    }
    case 12: case 13:  // Q4_K Q5_K: d, dmin, scales[12]
      s.d = hdF16At(b), s.dmin = hdF16At(b + 2), s.hasD = s.hasDmin = true;
      kScales(b + 4, s.d, s.dmin);
      s.bytesRead = 16;
      break;
    case 14:  // Q6_K: int8 scales[16] at 192, d at 208
      s.d = hdF16At(b + 208), s.hasD = true;
      for (int i = 0; i < 16; ++i) s.sub[s.nSub++] = s.d * float(int8_t(b[192 + i]));
      s.bytesRead = 18;
      break;
    case 15:  // Q8_K: f32 d
      s.d = hdBitsToFloat(uint32_t(b[0]) | (uint32_t(b[1]) << 8) | (uint32_t(b[2]) << 16) | (uint32_t(b[3]) << 24)), s.hasD = true, s.bytesRead = 4;
      break;
    case 23: {  // IQ4_XS: d, scales_h, scales_l[4]
      s.d = hdF16At(b), s.hasD = true;
      const uint16_t sh = uint16_t(b[2] | (b[3] << 8));
      for (int ib = 0; ib < 8; ++ib) s.sub[s.nSub++] = s.d * float((((b[4 + ib / 2] >> 4 * (ib % 2)) & 0xF) | (((sh >> 2 * ib) & 3) << 4)) - 32);
      s.bytesRead = 8;
      break;
    }
    // The I-quants: d, and each sub-block's scale as the decoder forms it (gguf_block_formulas.h);
    // the bytes counted are those holding d and the scale bits.
    case 16: case 18: {  // IQ2_XXS, IQ3_XXS: a 4-bit scale in the top of each 32 values' last word
      s.d = hdF16At(b), s.hasD = true;
      const int at = id == 16 ? 2 + 7 : 2 + 64 + 3, stride = id == 16 ? 8 : 4;
      const float last = id == 16 ? 0.25f : 0.5f;
      for (int ib = 0; ib < 8; ++ib) s.sub[s.nSub++] = s.d * (0.5f + float(b[at + stride * ib] >> 4)) * last;
      s.bytesRead = 2 + 8;
      break;
    }
    case 17: case 22: {  // IQ2_XS, IQ2_S: scales[8], two 4-bit scales each
      s.d = hdF16At(b), s.hasD = true;
      const uint8_t* sc = b + (id == 17 ? 66 : 74);
      for (int ib = 0; ib < 8; ++ib)
        s.sub[s.nSub++] = s.d * (0.5f + float(sc[ib] & 0xf)) * 0.25f, s.sub[s.nSub++] = s.d * (0.5f + float(sc[ib] >> 4)) * 0.25f;
      s.bytesRead = 2 + 8;
      break;
    }
    case 21:  // IQ3_S: scales[4] at 106, two 4-bit scales each
      s.d = hdF16At(b), s.hasD = true;
      for (int k = 0; k < 4; ++k) s.sub[s.nSub++] = s.d * float(1 + 2 * (b[106 + k] & 0xf)), s.sub[s.nSub++] = s.d * float(1 + 2 * (b[106 + k] >> 4));
      s.bytesRead = 2 + 4;
      break;
    case 19:  // IQ1_S: a 3-bit scale in bits 12-14 of each qh word (at 34)
      s.d = hdF16At(b), s.hasD = true;
      for (int ib = 0; ib < 8; ++ib) s.sub[s.nSub++] = s.d * float(2 * ((b[35 + 2 * ib] >> 4) & 7) + 1);
      s.bytesRead = 2 + 8;
      break;
    case 29: {  // IQ1_M: four u16 at 48 hold 3-bit scales and, in their top nibbles, the fp16 d
      uint32_t sc[4];
      for (int k = 0; k < 4; ++k) sc[k] = uint32_t(b[48 + 2 * k] | (b[49 + 2 * k] << 8));
      s.d = blocks::iq1mD(b), s.hasD = true;
      for (int ib = 0; ib < 8; ++ib)
        for (int h = 0; h < 2; ++h) s.sub[s.nSub++] = s.d * float(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3 * h)) & 0x7) + 1);
      s.bytesRead = 8;
      break;
    }
    case 34: s.d = hdF16At(b + 52), s.hasD = true, s.bytesRead = 2; break;  // TQ1_0
    case 35: s.d = hdF16At(b + 64), s.hasD = true, s.bytesRead = 2; break;  // TQ2_0
    case 39: s.d = hdE8m0ToFloat(b[0]), s.hasD = true, s.bytesRead = 1; break;  // MXFP4: the block's E8M0 exponent
    case 40:  // NVFP4: four UE4M3 sub-block scales
      for (int k = 0; k < 4; ++k) s.sub[s.nSub++] = hdGgmlUe4m3Half(b[k]) * 2.0f;
      s.bytesRead = 4;
      break;
    default: break;
  }
  return s;
}

}  // namespace ws::num

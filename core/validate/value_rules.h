// The values family (WS-V*): what a checkpoint's scales and weights hold, read from every byte of
// them. One pass reads each tensor's scales, then its weights, on all cores: the scale rules judge
// the scale statistics, the weight rules each weight's extremes (RowDecoder::extent), and a
// tensor whose scales are reported is not reported again for its weights. --distributed: each
// rank reads its share of the bytes (value_shares.h), and every rank ends with the whole report.
#pragma once

#include <string>

#include "core/model/checkpoint.h"
#include "core/numerics/stats.h"
#include "core/validate/sink.h"
#include "core/validate/validator.h"

namespace ws::val {

// Adds the findings to `sink`, and to `rep` the bytes read ("values (scales)", "values
// (weights)"; by rank when distributed) and the scale statistics by layer. A local read that
// fails (a file cut short after it was opened) is a WS-I024 finding on its tensor, and the pass
// goes on. Throws CoreError when cancelled or when a remote checkpoint's bytes cannot be fetched.
void valueRules(const Checkpoint& c, Sink& sink, const ValidateOptions& opt, ValidationReport& rep);

// WS-V001..V006 over one scale tensor's (or group's) values: NaN (V006 for an E8M0 scale's NaN
// code), infinite, and - unless the scheme's scales are signed by design - negative, zero and
// subnormal values, each a finding naming `kind` and `tensor`. True when any fired: the weights
// such scales multiply are not reported again.
bool judgeScaleValues(const num::Stats& s, const std::string& kind, const std::string& tensor, bool signedByDesign, bool e8m0, Sink& sink);

}  // namespace ws::val

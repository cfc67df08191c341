#include "core/formats/torch_save.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

namespace ws {

namespace {

constexpr uint64_t kMaxFile = uint64_t(1) << 30;  // a recorder's counts are kilobytes to megabytes

uint32_t u16(const std::vector<uint8_t>& b, size_t at) { return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8; }
uint32_t u32(const std::vector<uint8_t>& b, size_t at) { return u16(b, at) | u16(b, at + 2) << 16; }

// The zip's stored entries by name, from its central directory (torch writes the sizes there and
// in data descriptors, not in the local headers: general-purpose flag bit 3).
std::map<std::string, std::pair<size_t, size_t>> zipEntries(const std::vector<uint8_t>& b, const std::string& path) {
  auto bad = [&](const std::string& why, uint64_t offset) { fail(ErrorCode::Usage, "not a torch.save zip: " + why, path, offset); };
  if (b.size() < 22) bad("shorter than a zip's end record", 0);
  size_t end = b.size() - 22;
  const size_t stop = b.size() > 22 + 65535 ? b.size() - 22 - 65535 : 0;
  while (u32(b, end) != 0x06054b50) {
    if (end == stop) bad("no end-of-central-directory record", b.size());
    --end;
  }
  const uint32_t count = u16(b, end + 10), size = u32(b, end + 12), at = u32(b, end + 16);
  if (count == 0xFFFF || size == 0xFFFFFFFF || at == 0xFFFFFFFF) bad("a zip64 archive, not read here", end);
  if (uint64_t(at) + size > end) bad("the central directory runs past its end record", at);
  std::map<std::string, std::pair<size_t, size_t>> out;
  size_t p = at;
  for (uint32_t i = 0; i < count; ++i) {
    if (p + 46 > end || u32(b, p) != 0x02014b50) bad("a central directory entry is cut or mis-signed", p);
    const uint32_t method = u16(b, p + 10), csize = u32(b, p + 20), usize = u32(b, p + 24);
    const uint32_t nameLen = u16(b, p + 28), extraLen = u16(b, p + 30), commentLen = u16(b, p + 32), local = u32(b, p + 42);
    if (p + 46 + nameLen > end) bad("an entry's name runs past the directory", p);
    const std::string name(reinterpret_cast<const char*>(b.data() + p + 46), nameLen);
    if (method != 0 || csize != usize) bad(name + " is compressed (method " + std::to_string(method) + "); torch.save stores its entries", p);
    if (csize == 0xFFFFFFFF || local == 0xFFFFFFFF) bad(name + " needs zip64, not read here", p);
    if (uint64_t(local) + 30 > b.size() || u32(b, local) != 0x04034b50) bad(name + "'s local header is missing", local);
    const size_t data = size_t(local) + 30 + u16(b, local + 26) + u16(b, local + 28);
    if (uint64_t(data) + csize > b.size()) bad(name + " runs past the end of the file", data);
    out[name] = {data, csize};
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

// A value of the pickle: only the kinds a saved tensor or dict of them holds.
struct Value;
using Ref = std::shared_ptr<Value>;
struct Value {
  enum Kind { None, Bool, Int, Float, Str, Tuple, List, Dict, Global, Storage, Tensor, Mark } kind = None;
  int64_t i = 0;
  double f = 0;
  std::string s;                              // Str, Global ("module.name"), Storage (its key)
  std::vector<Ref> items;                     // Tuple, List; Storage: its pid tuple
  std::vector<std::pair<Ref, Ref>> entries;   // Dict
  static Ref make(Kind k) {
    auto v = std::make_shared<Value>();
    v->kind = k;
    return v;
  }
};

class Unpickler {
 public:
  Unpickler(const uint8_t* data, size_t size, std::string path) : d_(data), n_(size), path_(std::move(path)) {}

  Ref run() {
    while (true) {
      const size_t at = p_;
      const uint8_t op = byte();
      switch (op) {
        case 0x80: byte(); break;                           // PROTO
        case 0x95: take(8); break;                          // FRAME
        case '}': push(Value::make(Value::Dict)); break;    // EMPTY_DICT
        case ']': push(Value::make(Value::List)); break;    // EMPTY_LIST
        case ')': push(Value::make(Value::Tuple)); break;   // EMPTY_TUPLE
        case '(': push(Value::make(Value::Mark)); break;    // MARK
        case 'N': push(Value::make(Value::None)); break;
        case 0x88: case 0x89: {                             // NEWTRUE, NEWFALSE
          auto v = Value::make(Value::Bool);
          v->i = op == 0x88;
          push(v);
          break;
        }
        case 'K': pushInt(byte()); break;                   // BININT1
        case 'M': pushInt(int64_t(le(2))); break;           // BININT2
        case 'J': pushInt(int64_t(int32_t(le(4)))); break;  // BININT
        case 0x8a: {                                        // LONG1: little-endian two's complement
          const size_t len = byte();
          if (len > 8) bad("an integer of " + std::to_string(len) + " bytes", at);
          uint64_t u = le(len);
          if (len && len < 8 && (u >> (8 * len - 1)) & 1) u |= ~uint64_t(0) << (8 * len);
          pushInt(int64_t(u));
          break;
        }
        case 'G': {                                         // BINFLOAT, big-endian
          uint64_t u = 0;
          for (int k = 0; k < 8; ++k) u = u << 8 | byte();
          auto v = Value::make(Value::Float);
          std::memcpy(&v->f, &u, 8);
          push(v);
          break;
        }
        case 'X': pushStr(take(size_t(le(4)))); break;      // BINUNICODE
        case 0x8c: pushStr(take(byte())); break;            // SHORT_BINUNICODE
        case 'c': {                                         // GLOBAL "module\nname\n"
          auto v = Value::make(Value::Global);
          const std::string module = line();  // two statements: operands of + are unsequenced
          v->s = module + "." + line();
          push(v);
          break;
        }
        case 'q': memo_[byte()] = top(at); break;           // BINPUT
        case 'r': memo_[le(4)] = top(at); break;            // LONG_BINPUT
        case 0x94: memo_[memo_.size()] = top(at); break;    // MEMOIZE
        case 'h': push(memo(byte(), at)); break;            // BINGET
        case 'j': push(memo(le(4), at)); break;             // LONG_BINGET
        case 't': {                                         // TUPLE
          auto v = Value::make(Value::Tuple);
          v->items = popToMark(at);
          push(v);
          break;
        }
        case 0x85: case 0x86: case 0x87: {                  // TUPLE1..3
          auto v = Value::make(Value::Tuple);
          v->items.resize(size_t(op - 0x84));
          for (size_t k = v->items.size(); k-- > 0;) v->items[k] = pop(at);
          push(v);
          break;
        }
        case 'a': {                                         // APPEND
          Ref x = pop(at);
          expect(top(at), Value::List, at)->items.push_back(x);
          break;
        }
        case 'e': {                                         // APPENDS
          auto xs = popToMark(at);
          auto& list = expect(top(at), Value::List, at)->items;
          list.insert(list.end(), xs.begin(), xs.end());
          break;
        }
        case 's': {                                         // SETITEM
          Ref v = pop(at), k = pop(at);
          expect(top(at), Value::Dict, at)->entries.push_back({k, v});
          break;
        }
        case 'u': {                                         // SETITEMS
          auto kv = popToMark(at);
          if (kv.size() % 2) bad("an odd number of dict items", at);
          Ref dict = expect(top(at), Value::Dict, at);
          for (size_t k = 0; k < kv.size(); k += 2) dict->entries.push_back({kv[k], kv[k + 1]});
          break;
        }
        case 'Q': {                                         // BINPERSID: ('storage', type, key, location, numel)
          Ref pid = pop(at);
          if (pid->kind != Value::Tuple || pid->items.size() < 5 || pid->items[0]->kind != Value::Str || pid->items[0]->s != "storage")
            bad("a persistent id that is no storage", at);
          auto v = Value::make(Value::Storage);
          v->s = pid->items[2]->s;
          v->items = pid->items;
          push(v);
          break;
        }
        case 'R': {                                         // REDUCE
          Ref args = pop(at), fn = pop(at);
          push(reduce(fn, args, at));
          break;
        }
        case 'b': pop(at); break;                           // BUILD: a state torch tensors do not carry
        case '.': return pop(at);                           // STOP
        default: bad("pickle opcode 0x" + hex(op) + " is not read here", at);
      }
    }
  }

 private:
  [[noreturn]] void bad(const std::string& why, size_t at) const { fail(ErrorCode::Usage, "torch.save pickle: " + why, path_, uint64_t(at)); }
  static std::string hex(uint8_t b) {
    const char* digits = "0123456789abcdef";
    return std::string{digits[b >> 4], digits[b & 15]};
  }
  uint8_t byte() {
    if (p_ >= n_) bad("cut short", p_);
    return d_[p_++];
  }
  std::string take(size_t len) {
    if (len > n_ - p_) bad("a string runs past the pickle", p_);
    std::string s(reinterpret_cast<const char*>(d_ + p_), len);
    p_ += len;
    return s;
  }
  uint64_t le(size_t len) {
    uint64_t u = 0;
    for (size_t k = 0; k < len; ++k) u |= uint64_t(byte()) << (8 * k);
    return u;
  }
  std::string line() {
    std::string s;
    for (char c = char(byte()); c != '\n'; c = char(byte())) s += c;
    return s;
  }
  void push(Ref v) { stack_.push_back(std::move(v)); }
  void pushInt(int64_t i) {
    auto v = Value::make(Value::Int);
    v->i = i;
    push(v);
  }
  void pushStr(std::string s) {
    auto v = Value::make(Value::Str);
    v->s = std::move(s);
    push(v);
  }
  Ref top(size_t at) const {
    if (stack_.empty()) bad("the stack is empty", at);
    return stack_.back();
  }
  Ref pop(size_t at) {
    Ref v = top(at);
    stack_.pop_back();
    return v;
  }
  Ref memo(uint64_t key, size_t at) const {
    auto it = memo_.find(key);
    if (it == memo_.end()) bad("memo " + std::to_string(key) + " was never stored", at);
    return it->second;
  }
  Ref expect(Ref v, Value::Kind k, size_t at) const {
    if (v->kind != k) bad("an item added to something that is not a list or dict", at);
    return v;
  }
  std::vector<Ref> popToMark(size_t at) {
    std::vector<Ref> out;
    while (true) {
      Ref v = pop(at);
      if (v->kind == Value::Mark) break;
      out.push_back(v);
    }
    std::reverse(out.begin(), out.end());
    return out;
  }
  // torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata])
  // and collections.OrderedDict(); any other callable is not run.
  Ref reduce(const Ref& fn, const Ref& args, size_t at) {
    if (fn->kind == Value::Global && fn->s == "collections.OrderedDict") return Value::make(Value::Dict);
    if (fn->kind == Value::Global && fn->s == "torch._utils._rebuild_tensor_v2" && args->kind == Value::Tuple && args->items.size() >= 4 &&
        args->items[0]->kind == Value::Storage && args->items[1]->kind == Value::Int && args->items[2]->kind == Value::Tuple && args->items[3]->kind == Value::Tuple) {
      auto v = Value::make(Value::Tensor);
      v->items = {args->items[0], args->items[1], args->items[2], args->items[3]};
      return v;
    }
    bad("a call of " + (fn->kind == Value::Global ? fn->s : std::string("a non-global")) + " is not run here", at);
  }

  const uint8_t* d_;
  size_t n_, p_ = 0;
  std::string path_;
  std::vector<Ref> stack_;
  std::map<uint64_t, Ref> memo_;
};

int64_t elementBytes(const std::string& type) {
  if (type == "IntStorage") return 4;
  if (type == "LongStorage") return 8;
  return 0;
}

}  // namespace

int64_t TorchTensor::integerAt(const std::vector<int64_t>& index) const {
  int64_t element = storageOffset;
  for (size_t k = 0; k < index.size(); ++k) element += index[k] * stride[k];
  const int64_t width = elementBytes(storageType);
  uint64_t u = 0;
  for (int64_t b = 0; b < width; ++b) u |= uint64_t(storage[size_t(element * width + b)]) << (8 * b);
  return width == 4 ? int64_t(int32_t(uint32_t(u))) : int64_t(u);
}

Result<TorchTensor> readTorchSavedTensor(const std::string& path, const std::string& key) {
  std::vector<uint8_t> bytes;
  auto read = capture([&]() -> bool {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) fail(ErrorCode::Io, "cannot open the torch.save file", path);
    const auto size = uint64_t(in.tellg());
    if (size > kMaxFile) fail(ErrorCode::Usage, "larger than a recorder's counts (" + std::to_string(size) + " bytes): not read", path);
    bytes.resize(size);
    in.seekg(0);
    in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(size));
    if (!in) fail(ErrorCode::Io, "cannot read the torch.save file", path);
    return true;
  });
  if (!read) return read.error();
  return parseTorchSavedTensor(bytes, key, path);
}

Result<TorchTensor> parseTorchSavedTensor(const std::vector<uint8_t>& bytes, const std::string& key, const std::string& path) {
  return capture([&]() -> TorchTensor {
    const auto entries = zipEntries(bytes, path);
    // The archive's folder: the entry ending in "/data.pkl".
    std::string folder;
    for (const auto& [name, span] : entries)
      if (name.size() >= 9 && name.compare(name.size() - 9, 9, "/data.pkl") == 0) folder = name.substr(0, name.size() - 8);
    if (folder.empty()) fail(ErrorCode::Usage, "not a torch.save zip: no data.pkl entry", path);
    if (auto order = entries.find(folder + "byteorder"); order != entries.end() &&
                                                          std::string(reinterpret_cast<const char*>(bytes.data() + order->second.first), order->second.second) != "little")
      fail(ErrorCode::Usage, "a big-endian torch.save file, not read here", path);
    const auto pickle = entries.at(folder + "data.pkl");
    Ref object = Unpickler(bytes.data() + pickle.first, pickle.second, path).run();
    if (!key.empty()) {
      if (object->kind != Value::Dict) fail(ErrorCode::Usage, "the saved object is not a dict, so it has no '" + key + "'", path);
      Ref found;
      for (const auto& [k, v] : object->entries)
        if (k->kind == Value::Str && k->s == key) found = v;
      if (!found) fail(ErrorCode::Usage, "the saved dict has no '" + key + "'", path);
      object = found;
    }
    if (object->kind != Value::Tensor) fail(ErrorCode::Usage, "'" + key + "' is not a tensor", path);
    TorchTensor t;
    const Ref& storage = object->items[0];
    const Ref& type = storage->items[1];
    t.storageType = type->kind == Value::Global ? type->s.substr(type->s.rfind('.') + 1) : "";
    const int64_t width = elementBytes(t.storageType);
    if (!width) fail(ErrorCode::Usage, "a tensor of " + (t.storageType.empty() ? std::string("an unnamed storage") : t.storageType) + ": only integer counts (Int, Long) are read", path);
    t.storageOffset = object->items[1]->i;
    for (int part : {2, 3})
      for (const Ref& d : object->items[size_t(part)]->items) {
        // Sizes and strides past 2^40 reach no storage a file this size holds; the bound keeps the
        // reach below from overflowing.
        if (d->kind != Value::Int || d->i < 0 || d->i > (int64_t(1) << 40)) fail(ErrorCode::Usage, "a tensor size or stride that is not a plausible integer", path);
        (part == 2 ? t.shape : t.stride).push_back(d->i);
      }
    if (t.shape.size() != t.stride.size() || t.shape.size() > 8) fail(ErrorCode::Usage, "the tensor's size and stride differ in rank, or its rank is past 8", path);
    if (t.storageOffset < 0 || t.storageOffset > (int64_t(1) << 40)) fail(ErrorCode::Usage, "an implausible storage offset", path);
    auto data = entries.find(folder + "data/" + storage->s);
    if (data == entries.end()) fail(ErrorCode::Usage, "storage '" + storage->s + "' has no data entry", path);
    t.storage.assign(bytes.begin() + std::ptrdiff_t(data->second.first), bytes.begin() + std::ptrdiff_t(data->second.first + data->second.second));
    // The largest element the view reaches must lie inside the storage.
    __int128 last = t.storageOffset;
    for (size_t k = 0; k < t.shape.size(); ++k) {
      if (t.shape[k] == 0) last = -1;
      if (last >= 0) last += __int128(t.shape[k] - 1) * t.stride[k];
    }
    if (last >= 0 && (last + 1) * width > __int128(t.storage.size()))
      fail(ErrorCode::Usage, "the tensor reaches past its storage of " + std::to_string(t.storage.size() / uint64_t(width)) + " elements", path);
    return t;
  });
}

}  // namespace ws

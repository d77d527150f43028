#include "store/checkpoint.h"

#include <charconv>
#include <string>
#include <type_traits>
#include <utility>

#include "store/internal/str_cat.h"
#include "store/status.h"

namespace layerproof::store {
namespace {

using internal::Cat;

constexpr char kBase64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kSignaturePrefix = "\xE2\x80\x94 ";  // "— "
constexpr uint8_t kEd25519Algorithm = 0x01;
// A checkpoint note is a few hundred bytes; refuse anything huge before
// looking at it.
constexpr size_t kMaxNoteBytes = 1 << 20;
constexpr int kMaxSignatures = 100;

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (true) {
    const size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string_view::npos
                                           ? std::string_view::npos
                                           : nl - start));
    if (nl == std::string_view::npos) return lines;
    start = nl + 1;
  }
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

absl::Status BadNote(std::string_view what) {
  return absl::InvalidArgumentError(Cat("checkpoint note: ", what));
}

// Lines must be printable: no control characters but the newline.
bool PrintableLine(std::string_view line) {
  for (char c : line) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

}  // namespace

std::string Base64Encode(Bytes data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  for (size_t i = 0; i < data.size(); i += 3) {
    const uint32_t b0 = data[i];
    const uint32_t b1 = i + 1 < data.size() ? data[i + 1] : 0;
    const uint32_t b2 = i + 2 < data.size() ? data[i + 2] : 0;
    const uint32_t v = b0 << 16 | b1 << 8 | b2;
    out += kBase64[v >> 18];
    out += kBase64[(v >> 12) & 63];
    out += i + 1 < data.size() ? kBase64[(v >> 6) & 63] : '=';
    out += i + 2 < data.size() ? kBase64[v & 63] : '=';
  }
  return out;
}

absl::StatusOr<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) {
    return absl::InvalidArgumentError("base64: length is not a multiple of 4");
  }
  std::string out;
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      const char c = text[i + j];
      if (c == '=' && last && j >= 2) {
        v[j] = 0;
        ++pad;
        continue;
      }
      if (pad > 0 || (v[j] = Base64Value(c)) < 0) {
        return absl::InvalidArgumentError(
            Cat("base64: bad character at offset ", i + j));
      }
    }
    const uint32_t x = uint32_t(v[0]) << 18 | uint32_t(v[1]) << 12 |
                       uint32_t(v[2]) << 6 | uint32_t(v[3]);
    // Canonical: the bits padding drops must be zero.
    if ((pad == 1 && (x & 0xff) != 0) || (pad == 2 && (x & 0xffff) != 0)) {
      return absl::InvalidArgumentError("base64: non-canonical padding bits");
    }
    out += static_cast<char>(x >> 16);
    if (pad < 2) out += static_cast<char>((x >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(x & 0xff);
  }
  return out;
}

std::string CheckpointBody(const Checkpoint& c) {
  std::string s = Cat(c.origin, "\n", c.size, "\n", Base64Encode(c.root), "\n");
  for (const std::string& e : c.extensions) s += e + "\n";
  return s;
}

absl::StatusOr<Checkpoint> ParseCheckpointBody(std::string_view text) {
  return PrintableStatus([&]() -> absl::StatusOr<Checkpoint> {
    if (text.empty() || text.back() != '\n') {
      return BadNote("body must end with a newline");
    }
    std::vector<std::string_view> lines =
        SplitLines(text.substr(0, text.size() - 1));
    if (lines.size() < 3) return BadNote("body has fewer than 3 lines");
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].empty()) {
        return BadNote(Cat("body line ", i + 1, " is empty"));
      }
      if (!PrintableLine(lines[i])) {
        return BadNote(Cat("body line ", i + 1, " has a control character"));
      }
    }
    Checkpoint c;
    c.origin = std::string(lines[0]);
    const std::string_view size = lines[1];
    const auto [end, ec] =
        std::from_chars(size.data(), size.data() + size.size(), c.size);
    if (ec != std::errc() || end != size.data() + size.size() ||
        (size.size() > 1 && size[0] == '0')) {
      return BadNote(
          Cat("tree size line \"", size, "\" is not a decimal number"));
    }
    absl::StatusOr<std::string> root = Base64Decode(lines[2]);
    if (!root.ok() || root->size() != c.root.size()) {
      return BadNote("root hash line is not the base64 of 32 bytes");
    }
    std::copy(root->begin(), root->end(), c.root.begin());
    for (size_t i = 3; i < lines.size(); ++i) {
      c.extensions.emplace_back(lines[i]);
    }
    return c;
  }());
}

uint32_t NoteKeyId(std::string_view name, const Ed25519PublicKey& key) {
  Sha256Hasher h;
  h.Update(name);
  const uint8_t sep[2] = {0x0A, kEd25519Algorithm};
  h.Update(Bytes(sep, 2));
  h.Update(Bytes(key.raw()));
  const Sha256Hash d = h.Final();
  return uint32_t{d[0]} << 24 | uint32_t{d[1]} << 16 | uint32_t{d[2]} << 8 |
         uint32_t{d[3]};
}

std::string VerifierKey(std::string_view name, const Ed25519PublicKey& key) {
  const uint32_t id = NoteKeyId(name, key);
  const uint8_t id_bytes[4] = {uint8_t(id >> 24), uint8_t(id >> 16),
                               uint8_t(id >> 8), uint8_t(id)};
  std::string typed(1, static_cast<char>(kEd25519Algorithm));
  typed.append(reinterpret_cast<const char*>(key.raw().data()),
               key.raw().size());
  return Cat(name, "+", HexEncode(Bytes(id_bytes, 4)), "+",
             Base64Encode(AsBytes(typed)));
}

absl::StatusOr<CheckpointSigner> CheckpointSigner::Create(
    std::string name, Ed25519PrivateKey key) {
  if (name.empty() || name.find_first_of(" +\n") != std::string::npos ||
      !PrintableLine(name)) {
    return absl::InvalidArgumentError(
        Cat("checkpoint key name \"", name,
            "\": want non-empty, printable, without spaces or '+'"));
  }
  return CheckpointSigner(std::move(name), std::move(key));
}

absl::StatusOr<std::string> CheckpointSigner::Sign(const Checkpoint& c) const {
  if (c.origin.empty() || !PrintableLine(c.origin)) {
    return BadNote("origin must be non-empty and printable");
  }
  for (const std::string& e : c.extensions) {
    if (e.empty() || !PrintableLine(e)) {
      return BadNote("extension lines must be non-empty and printable");
    }
  }
  const std::string body = CheckpointBody(c);
  LP_ASSIGN_OR_RETURN(const Ed25519Signature sig, key_.Sign(AsBytes(body)));
  const uint32_t id = NoteKeyId(name_, key_.public_key());
  std::string blob = {static_cast<char>(id >> 24), static_cast<char>(id >> 16),
                      static_cast<char>(id >> 8), static_cast<char>(id)};
  blob.append(reinterpret_cast<const char*>(sig.data()), sig.size());
  return Cat(body, "\n", kSignaturePrefix, name_, " ",
             Base64Encode(AsBytes(blob)), "\n");
}

absl::StatusOr<Checkpoint> CheckpointVerifier::Verify(
    std::string_view note, std::string_view origin) const {
  return PrintableStatus([&]() -> absl::StatusOr<Checkpoint> {
    if (note.size() > kMaxNoteBytes) {
      return BadNote(Cat("larger than ", kMaxNoteBytes, " bytes"));
    }
    const size_t split = note.find("\n\n");
    if (split == std::string_view::npos) {
      return BadNote("no blank line before the signatures");
    }
    const std::string_view body = note.substr(0, split + 1);
    std::string_view sigs = note.substr(split + 2);
    if (sigs.empty() || sigs.back() != '\n') {
      return BadNote("signature block must end with a newline");
    }
    LP_ASSIGN_OR_RETURN(Checkpoint c, ParseCheckpointBody(body));
    if (!origin.empty() && c.origin != origin) {
      return absl::PermissionDeniedError(Cat(
          "checkpoint note: origin \"", c.origin, "\", want \"", origin, "\""));
    }
    const uint32_t want_id = NoteKeyId(name_, key_);
    std::vector<std::string_view> lines =
        SplitLines(sigs.substr(0, sigs.size() - 1));
    if (static_cast<int>(lines.size()) > kMaxSignatures) {
      return BadNote(Cat("more than ", kMaxSignatures, " signatures"));
    }
    bool verified = false;
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string_view line = lines[i];
      if (line.substr(0, kSignaturePrefix.size()) != kSignaturePrefix) {
        return BadNote(
            Cat("signature line ", i + 1, " does not start with \"— \""));
      }
      line.remove_prefix(kSignaturePrefix.size());
      const size_t space = line.find(' ');
      if (space == std::string_view::npos || space == 0) {
        return BadNote(Cat("signature line ", i + 1, " has no key name"));
      }
      absl::StatusOr<std::string> blob = Base64Decode(line.substr(space + 1));
      if (!blob.ok() || blob->size() < 5) {
        return BadNote(Cat("signature line ", i + 1,
                           " is not base64 of a key id and signature"));
      }
      const uint32_t id = uint32_t(uint8_t((*blob)[0])) << 24 |
                          uint32_t(uint8_t((*blob)[1])) << 16 |
                          uint32_t(uint8_t((*blob)[2])) << 8 |
                          uint32_t(uint8_t((*blob)[3]));
      if (line.substr(0, space) != name_ || id != want_id) continue;
      if (blob->size() != 4 + 64) {
        return BadNote(Cat("signature line ", i + 1,
                           ": Ed25519 signature is not 64 bytes"));
      }
      if (key_.Verify(AsBytes(body), AsBytes(std::string_view(*blob).substr(4)))
              .ok()) {
        verified = true;
      }
    }
    if (!verified) {
      return absl::PermissionDeniedError(
          Cat("checkpoint note: no valid signature by key \"", name_, "\""));
    }
    return c;
  }());
}

}  // namespace layerproof::store

// Whole-file digests for checking a download against the Hub's own record: SHA-256 (what the Hub
// stores for an LFS file) and the git blob SHA-1 (a small file's blobId), both with OpenSSL's
// libcrypto, read in large sequential chunks at the disk's speed. Optional like libcurl: a build
// without OpenSSL says so instead.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace ws {

bool fileHashAvailable();

enum class FileDigest { Sha256, GitBlobSha1 };

// Lower-case hex digest of the file's bytes. `read` is called with the bytes hashed so far (from
// the calling thread), `cancel` is polled between chunks. Throws CoreError(Io) naming the file
// when it cannot be read, and "cancelled" when cancel was set.
std::string digestFile(const std::string& path, FileDigest kind, const std::function<void(uint64_t)>& read = {},
                       const std::atomic<bool>* cancel = nullptr);

}  // namespace ws

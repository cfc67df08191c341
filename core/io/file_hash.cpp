#include "core/io/file_hash.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "core/util/error.h"

#ifdef WEIGHTSCOPE_HAVE_OPENSSL
#include <openssl/evp.h>
#endif

namespace ws {

#ifndef WEIGHTSCOPE_HAVE_OPENSSL
bool fileHashAvailable() { return false; }
std::string digestFile(const std::string& path, FileDigest, const std::function<void(uint64_t)>&, const std::atomic<bool>*) {
  fail(ErrorCode::Io, "this build has no OpenSSL: files cannot be hashed", path);
}
#else
bool fileHashAvailable() { return true; }

std::string digestFile(const std::string& path, FileDigest kind, const std::function<void(uint64_t)>& read, const std::atomic<bool>* cancel) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorCode::Io, "cannot open to hash it", path);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) fail(ErrorCode::Io, "not a regular file", path);
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);  // the kernel reads ahead in large runs
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  struct Freer {
    EVP_MD_CTX* c;
    ~Freer() { EVP_MD_CTX_free(c); }
  } freer{ctx};
  if (!ctx || EVP_DigestInit_ex(ctx, kind == FileDigest::Sha256 ? EVP_sha256() : EVP_sha1(), nullptr) != 1) fail(ErrorCode::Io, "OpenSSL cannot start a digest", path);
  if (kind == FileDigest::GitBlobSha1) {  // git hashes "blob SIZE\0" and then the bytes
    const std::string prefix = "blob " + std::to_string(uint64_t(st.st_size)) + std::string(1, '\0');
    EVP_DigestUpdate(ctx, prefix.data(), prefix.size());
  }
  std::vector<unsigned char> buf(8 << 20);
  uint64_t done = 0;
  while (true) {
    if (cancel && cancel->load()) fail(ErrorCode::Io, "cancelled", path);
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), off_t(done));
    if (n < 0) fail(ErrorCode::Io, "read failed while hashing", path, done);
    if (n == 0) break;
    EVP_DigestUpdate(ctx, buf.data(), size_t(n));
    done += uint64_t(n);
    if (read) read(done);
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) out += hex[md[i] >> 4], out += hex[md[i] & 15];
  return out;
}
#endif

}  // namespace ws

// SPDX-License-Identifier: MIT
#include "io/AtomicFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace fxlens::io {

std::string atomicTempPrefix(const std::string &path)
{
    const std::filesystem::path p(path);
    return (p.parent_path() / ("." + p.filename().string() + ".fxlens-tmp-")).string();
}

namespace {

Status writeFailure(const std::string &path, std::string message)
{
    Diagnostic d;
    d.file = path;
    d.message = std::move(message);
    return d;
}

} // namespace

Status writeFileAtomic(const std::string &path, std::string_view data)
{
    std::string tmpl = atomicTempPrefix(path) + "XXXXXX";
    int fd = mkstemp(tmpl.data());
    if (fd < 0)
        return writeFailure(path, std::string("cannot create a file next to it: ") + std::strerror(errno));
    auto failed = [&](const char *what) {
        std::string m = std::string(what) + ": " + std::strerror(errno);
        ::close(fd);
        ::unlink(tmpl.c_str());
        return writeFailure(path, m);
    };
    // The target's permissions if it exists (mkstemp makes 0600), else the usual 0666 & ~umask.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
        ::fchmod(fd, st.st_mode & 07777);
    } else {
        mode_t mask = ::umask(0);
        ::umask(mask);
        ::fchmod(fd, 0666 & ~mask);
    }
    size_t done = 0;
    while (done < data.size()) {
        ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return failed("write failed");
        done += size_t(n);
    }
    if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
        return failed("write failed");
    if (::close(fd) != 0) {
        std::string m = std::string("write failed: ") + std::strerror(errno);
        ::unlink(tmpl.c_str());
        return writeFailure(path, m);
    }
    if (::rename(tmpl.c_str(), path.c_str()) != 0) {
        std::string m = std::string("cannot replace it: ") + std::strerror(errno);
        ::unlink(tmpl.c_str());
        return writeFailure(path, m);
    }
    return {};
}

} // namespace fxlens::io

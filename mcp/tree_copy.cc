#include "mcp/tree_copy.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "common/unique_fd.h"

namespace gander::mcp {
namespace {

// Bytes [from, to) of `in` to the same offsets of `out`: in the kernel where it can, else
// through a buffer.
Status CopyRange(int in, int out, off_t from, off_t to, CopyStats& stats) {
  off_t in_off = from, out_off = from;
  while (in_off < to) {
    ssize_t n = copy_file_range(in, &in_off, out, &out_off, static_cast<size_t>(to - in_off), 0);
    if (n > 0) {
      stats.bytes += static_cast<uint64_t>(n);
      continue;
    }
    if (n == 0) return {};  // the file shrank under us
    if (errno == EINTR) continue;
    if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
      return ErrnoError("copy_file_range");
    }
    break;
  }
  char buf[65536];
  while (in_off < to) {
    ssize_t n =
        pread(in, buf, static_cast<size_t>(std::min<off_t>(sizeof(buf), to - in_off)), in_off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("read");
    if (n == 0) return {};
    for (ssize_t done = 0; done < n;) {
      ssize_t w = pwrite(out, buf + done, static_cast<size_t>(n - done), in_off + done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return ErrnoError("write");
      done += w;
    }
    in_off += n;
    stats.bytes += static_cast<uint64_t>(n);
  }
  return {};
}

// A reflink where the filesystem has them; else the data segments only (SEEK_DATA/SEEK_HOLE),
// so that a sparse file stays sparse, and the size set last (a trailing hole).
Status CopyData(int in, int out, uint64_t size, CopyStats& stats) {
  if (ioctl(out, FICLONE, in) == 0) {
    stats.bytes += size;
    return {};
  }
  const off_t end = static_cast<off_t>(size);
  for (off_t pos = 0; pos < end;) {
    off_t data = lseek(in, pos, SEEK_DATA);
    if (data < 0 && errno == ENXIO) break;                     // only a hole is left
    if (data < 0) return CopyRange(in, out, pos, end, stats);  // no SEEK_DATA here: all of it
    off_t hole = lseek(in, data, SEEK_HOLE);
    if (hole < 0 || hole > end) hole = end;
    if (Status ok = CopyRange(in, out, data, hole, stats); !ok) return ok;
    pos = hole;
  }
  if (ftruncate(out, end) != 0) return ErrnoError("ftruncate");
  return {};
}

Status CopyEntry(int src_dir, const std::string& name, int dst_dir, const std::string& dst_name,
                 const CopyOptions& o, CopyStats& stats, bool top, const std::string& where) {
  if (stats.files + stats.dirs + stats.symlinks > o.max_entries) {
    return MakeError("more than " + std::to_string(o.max_entries) + " entries");
  }
  if (stats.bytes > o.max_bytes)
    return MakeError("more than " + std::to_string(o.max_bytes) + " bytes");
  const int nofollow = top && o.follow_top ? 0 : O_NOFOLLOW;
  struct stat st;
  if (fstatat(src_dir, name.c_str(), &st, nofollow ? AT_SYMLINK_NOFOLLOW : 0) != 0) {
    return ErrnoError("stat " + where);
  }
  if (S_ISLNK(st.st_mode)) {
    if (!o.keep_symlinks) {
      ++stats.skipped;
      return {};
    }
    char target[4096];
    ssize_t n = readlinkat(src_dir, name.c_str(), target, sizeof(target) - 1);
    if (n < 0) return ErrnoError("readlink " + where);
    target[n] = '\0';
    unlinkat(dst_dir, dst_name.c_str(), 0);
    if (symlinkat(target, dst_dir, dst_name.c_str()) != 0) return ErrnoError("symlink " + where);
    ++stats.symlinks;
    return {};
  }
  if (S_ISDIR(st.st_mode)) {
    UniqueFd src(openat(src_dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | nofollow));
    if (!src) return ErrnoError("open " + where);
    if (mkdirat(dst_dir, dst_name.c_str(), 0700) != 0 && errno != EEXIST) {
      return ErrnoError("mkdir " + where);
    }
    UniqueFd dst(
        openat(dst_dir, dst_name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dst) return ErrnoError("open destination " + where);
    ++stats.dirs;
    std::vector<std::string> names;
    {
      int dup = fcntl(src.get(), F_DUPFD_CLOEXEC, 0);
      DIR* dir = fdopendir(dup);
      if (!dir) {
        close(dup);
        return ErrnoError("opendir " + where);
      }
      while (dirent* e = readdir(dir)) {
        std::string entry = e->d_name;
        if (entry != "." && entry != "..") names.push_back(entry);
      }
      closedir(dir);
    }
    for (const auto& entry : names) {
      if (o.skip && o.skip(where + "/" + entry)) {
        ++stats.skipped;
        continue;
      }
      Status copied =
          CopyEntry(src.get(), entry, dst.get(), entry, o, stats, false, where + "/" + entry);
      if (!copied) return copied;
    }
    fchmod(dst.get(), st.st_mode & 07777);
    timespec times[2] = {st.st_atim, st.st_mtim};
    futimens(dst.get(), times);
    return {};
  }
  if (!S_ISREG(st.st_mode)) {
    ++stats.skipped;  // devices, sockets, fifos stay where they are
    return {};
  }
  // The bound is on the bytes a file holds (its blocks), not its length: a sparse file with a
  // large hole is copied, holes kept.
  const uint64_t held = std::min<uint64_t>(static_cast<uint64_t>(st.st_size),
                                           static_cast<uint64_t>(st.st_blocks) * 512);
  if (o.max_file_bytes && held > o.max_file_bytes) {
    ++stats.skipped;
    ++stats.too_large;
    return {};
  }
  if (held > o.max_bytes - std::min(o.max_bytes, stats.bytes)) {
    return MakeError("more than " + std::to_string(o.max_bytes) + " bytes");
  }
  UniqueFd src(openat(src_dir, name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | nofollow));
  if (!src) return ErrnoError("open " + where);
  unlinkat(dst_dir, dst_name.c_str(), 0);
  UniqueFd dst(openat(dst_dir, dst_name.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!dst) return ErrnoError("create " + where);
  if (Status data = CopyData(src.get(), dst.get(), static_cast<uint64_t>(st.st_size), stats);
      !data) {
    return data.error().Context(where);
  }
  fchmod(dst.get(), st.st_mode & 0777);
  timespec times[2] = {st.st_atim, st.st_mtim};
  futimens(dst.get(), times);
  ++stats.files;
  return {};
}

}  // namespace

Status CopyTree(int src_dir, const std::string& src_name, int dst_dir, const std::string& dst_name,
                const CopyOptions& options, CopyStats& stats) {
  return CopyEntry(src_dir, src_name, dst_dir, dst_name, options, stats, true, src_name);
}

}  // namespace gander::mcp

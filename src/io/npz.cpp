// NumPy .npz archives (what numpy.savez and numpy.savez_compressed write): a zip archive whose members are
// .npy files, stored or deflated (https://pkware.cachefly.net/webdocs/casestudies/APPNOTE.TXT). The central
// directory at the end of the archive names the members and their sizes; NumPy forces ZIP64 local headers,
// so sizes of 0xFFFFFFFF are read from the entries' ZIP64 extra fields. One member is read into memory,
// inflated where deflated, its CRC-32 checked, and handed to the .npy reader under the name
// "archive.npz:member.npy", so that a fault in it is reported at its byte offset within the member.
#include <fmt/format.h>
#ifdef LINV_HAVE_ZLIB
#include <zlib.h>
#endif

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "io/formats.hpp"
#include "linv/errors.hpp"

namespace linv::io::detail {

#ifdef LINV_HAVE_ZLIB
namespace {

constexpr std::uint32_t kEndOfDirectory = 0x06054b50, kDirectoryEntry = 0x02014b50, kLocalHeader = 0x04034b50;
constexpr std::uint32_t kUnknown32 = 0xFFFFFFFF;  // "the value is in the ZIP64 extra field"

struct Member {
  std::string name;
  std::uint64_t method = 0, flags = 0, crc = 0, compressed = 0, size = 0, local_offset = 0;
  std::int64_t entry_offset = 0;  // where its central directory entry starts, for messages
};

// Reads `bytes` bytes at `offset`, or fails with a ParseError saying what was being read.
std::vector<unsigned char> read_at(InputFile& in, std::int64_t offset, std::uint64_t bytes, const char* what) {
  const std::int64_t size = *in.size();
  if (offset < 0 || offset > size || bytes > static_cast<std::uint64_t>(size - offset))
    throw ParseError(in.path(), offset, -1,
                     fmt::format("truncated archive: the {} ({} bytes at byte {}) runs past the end of the file ({} "
                                 "bytes)",
                                 what, bytes, offset, size));
  std::vector<unsigned char> out(static_cast<std::size_t>(bytes));
  in.seek(offset);
  if (in.read_some(out.data(), out.size()) < out.size())
    throw ParseError(in.path(), offset, -1, fmt::format("truncated archive: the {} could not be read", what));
  return out;
}

// The central directory's entries, from the end-of-directory record in the file's last 64 KiB.
std::vector<Member> directory(InputFile& in) {
  const std::string& path = in.path();
  const std::int64_t size = *in.size();
  if (size < 22) throw ParseError(path, 0, -1, fmt::format("not a .npz (zip) archive: {} bytes is too short", size));
  const std::int64_t tail_offset = std::max<std::int64_t>(0, size - 22 - 0xFFFF);
  const std::vector<unsigned char> tail = read_at(in, tail_offset, static_cast<std::uint64_t>(size - tail_offset),
                                                  "end of the archive");
  // The record is the last one whose comment runs exactly to the end of the file.
  std::int64_t end = -1;
  for (std::int64_t p = static_cast<std::int64_t>(tail.size()) - 22; p >= 0 && end < 0; --p) {
    const unsigned char* r = tail.data() + p;
    if (little_endian(r, 4) == kEndOfDirectory &&
        p + 22 + static_cast<std::int64_t>(little_endian(r + 20, 2)) == static_cast<std::int64_t>(tail.size()))
      end = p;
  }
  if (end < 0)
    throw ParseError(path, size, -1,
                     "not a .npz (zip) archive: no end-of-central-directory record in its last 64 KiB");
  const unsigned char* r = tail.data() + end;
  const std::int64_t record = tail_offset + end;
  const std::uint64_t entries = little_endian(r + 10, 2), bytes = little_endian(r + 12, 4),
                      offset = little_endian(r + 16, 4);
  if (entries == 0xFFFF || bytes == kUnknown32 || offset == kUnknown32)
    throw ParseError(path, record, -1,
                     "a ZIP64 archive (over 65535 members, or a directory beyond 4 GiB) is not supported: save "
                     "the arrays as separate .npy files");
  if (little_endian(r + 4, 2) != 0 || little_endian(r + 6, 2) != 0 || little_endian(r + 8, 2) != entries)
    throw ParseError(path, record, -1, "a zip archive split over several disks is not supported");
  if (offset + bytes > static_cast<std::uint64_t>(record))
    throw ParseError(path, record + 12, -1,
                     fmt::format("the central directory ({} bytes at byte {}) overlaps its end record at byte {}",
                                 bytes, offset, record));
  const std::vector<unsigned char> dir =
      read_at(in, static_cast<std::int64_t>(offset), bytes, "central directory");
  std::vector<Member> members;
  std::size_t at = 0;
  for (std::uint64_t k = 0; k < entries; ++k) {
    const std::int64_t entry = static_cast<std::int64_t>(offset + at);
    if (dir.size() - at < 46 || little_endian(dir.data() + at, 4) != kDirectoryEntry)
      throw ParseError(path, entry, -1,
                       fmt::format("central directory entry {} of {} is missing or malformed", k + 1, entries));
    const unsigned char* e = dir.data() + at;
    Member m;
    m.entry_offset = entry;
    m.flags = little_endian(e + 8, 2);
    m.method = little_endian(e + 10, 2);
    m.crc = little_endian(e + 16, 4);
    m.compressed = little_endian(e + 20, 4);
    m.size = little_endian(e + 24, 4);
    m.local_offset = little_endian(e + 42, 4);
    const std::size_t name = little_endian(e + 28, 2), extra = little_endian(e + 30, 2),
                      comment = little_endian(e + 32, 2);
    if (dir.size() - at - 46 < name + extra + comment)
      throw ParseError(path, entry, -1, fmt::format("central directory entry {} runs past the directory", k + 1));
    m.name.assign(reinterpret_cast<const char*>(e + 46), name);
    // ZIP64: the extra field with id 1 holds, in this order, the size, the compressed size and the local
    // header's offset, each only where the entry's own field is 0xFFFFFFFF.
    const unsigned char* x = e + 46 + name;
    for (std::size_t xat = 0; xat + 4 <= extra;) {
      const std::uint64_t id = little_endian(x + xat, 2), length = little_endian(x + xat + 2, 2);
      if (xat + 4 + length > extra)
        throw ParseError(path, entry, -1, fmt::format("the extra fields of member '{}' are malformed", m.name));
      if (id == 1) {
        std::size_t field = xat + 4;
        for (std::uint64_t* value : {&m.size, &m.compressed, &m.local_offset}) {
          if (*value != kUnknown32) continue;
          if (field + 8 > xat + 4 + length)
            throw ParseError(path, entry, -1,
                             fmt::format("the ZIP64 extra field of member '{}' is too short", m.name));
          *value = little_endian(x + field, 8);
          field += 8;
        }
      }
      xat += 4 + length;
    }
    members.push_back(std::move(m));
    at += 46 + name + extra + comment;
  }
  return members;
}

std::string member_list(const std::vector<Member>& members) {
  std::string list;
  for (const Member& m : members) {
    if (!list.empty()) list += ", ";
    list += m.name.ends_with(".npy") ? m.name.substr(0, m.name.size() - 4) : m.name;
  }
  return list;
}

// The member's bytes, inflated where deflated, their CRC-32 checked.
std::vector<unsigned char> member_bytes(InputFile& in, const Member& m) {
  const std::string where = fmt::format("{}:{}", in.path(), m.name);
  if (m.flags & 1) throw InputError(fmt::format("{} is encrypted; linv reads unencrypted archives", where));
  if (m.method != 0 && m.method != 8)
    throw ParseError(in.path(), m.entry_offset, -1,
                     fmt::format("member '{}' uses compression method {}; .npz members are stored (0) or deflated (8)",
                                 m.name, m.method));
  const std::vector<unsigned char> local =
      read_at(in, static_cast<std::int64_t>(std::min<std::uint64_t>(m.local_offset, std::numeric_limits<std::int64_t>::max())),
              30, "local header");
  if (little_endian(local.data(), 4) != kLocalHeader)
    throw ParseError(in.path(), static_cast<std::int64_t>(m.local_offset), -1,
                     fmt::format("member '{}': no local header where the directory says", m.name));
  const std::uint64_t data = m.local_offset + 30 + little_endian(local.data() + 26, 2) + little_endian(local.data() + 28, 2);
  if (m.method == 0 && m.compressed != m.size)
    throw ParseError(in.path(), m.entry_offset, -1,
                     fmt::format("member '{}' is stored, but its sizes differ ({} and {} bytes)", m.name, m.compressed,
                                 m.size));
  // Deflate packs at most kMaxDeflateRatio bytes into one: a larger size is corruption, refused before the
  // allocation it asks for.
  if (m.method == 8 && m.size / kMaxDeflateRatio > m.compressed)
    throw ParseError(in.path(), m.entry_offset, -1,
                     fmt::format("member '{}' claims {} bytes from {} deflated ones: the archive is corrupt", m.name,
                                 m.size, m.compressed));
  std::vector<unsigned char> packed = read_at(
      in, static_cast<std::int64_t>(std::min<std::uint64_t>(data, std::numeric_limits<std::int64_t>::max())),
      m.compressed, "member data");
  std::vector<unsigned char> bytes;
  if (m.method == 0) {
    bytes = std::move(packed);
  } else {
    bytes.resize(static_cast<std::size_t>(m.size));
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw InputError(fmt::format("{}: zlib could not start inflating", where));
    // Inflated in pieces of at most 1 GiB: zlib counts in 32-bit units.
    constexpr std::size_t kPiece = std::size_t{1} << 30;
    std::size_t in_at = 0, out_at = 0;
    int status = Z_OK;
    while (status == Z_OK) {
      z.next_in = packed.data() + in_at;
      z.avail_in = static_cast<uInt>(std::min(kPiece, packed.size() - in_at));
      z.next_out = bytes.data() + out_at;
      z.avail_out = static_cast<uInt>(std::min(kPiece, bytes.size() - out_at));
      const uInt in_before = z.avail_in, out_before = z.avail_out;
      status = inflate(&z, Z_NO_FLUSH);
      in_at += in_before - z.avail_in;
      out_at += out_before - z.avail_out;
      if (status == Z_OK && in_before == z.avail_in && out_before == z.avail_out) status = Z_BUF_ERROR;  // stuck
    }
    inflateEnd(&z);
    if (status != Z_STREAM_END || out_at != bytes.size())
      throw ParseError(in.path(), static_cast<std::int64_t>(data + in_at), -1,
                       fmt::format("member '{}': its deflated data is corrupt or truncated ({} of {} bytes inflated)",
                                   m.name, out_at, bytes.size()));
  }
  uLong crc = crc32(0L, Z_NULL, 0);
  for (std::size_t at = 0; at < bytes.size();) {
    const std::size_t piece = std::min<std::size_t>(bytes.size() - at, std::size_t{1} << 30);
    crc = crc32(crc, bytes.data() + at, static_cast<uInt>(piece));
    at += piece;
  }
  if (crc != m.crc)
    throw ParseError(in.path(), m.entry_offset, -1,
                     fmt::format("member '{}' fails its CRC-32 check (0x{:08x}, the directory says 0x{:08x}): the "
                                 "archive is corrupt",
                                 m.name, crc, m.crc));
  return bytes;
}

}  // namespace

InputFile npz_member(const std::string& path, const std::string& name) {
  InputFile in(path);
  if (!in.size())
    throw InputError(fmt::format("could not read {}: a .npz archive is read from a regular file, not a stream", path));
  const std::vector<Member> members = directory(in);
  const Member* chosen = nullptr;
  if (name.empty()) {
    if (members.size() != 1)
      throw ParseError(path, -1, -1,
                       fmt::format("holds {} arrays ({}): name one, as {}:NAME", members.size(), member_list(members),
                                   path));
    chosen = &members.front();
  } else {
    for (const Member& m : members)
      if (m.name == name || m.name == name + ".npy") chosen = &m;
    if (chosen == nullptr)
      throw ParseError(path, -1, -1,  // as a .mat file without the variable: data the file lacks (exit 3)
                       fmt::format("holds no array '{}'; it holds {}",
                                   name, members.empty() ? std::string("none") : member_list(members)));
  }
  return InputFile(fmt::format("{}:{}", path, chosen->name), member_bytes(in, *chosen));
}

#else

InputFile npz_member(const std::string& path, const std::string&) {
  throw InputError(fmt::format("could not read {}: this build of linv has no zlib, which .npz archives need", path));
}

#endif

}  // namespace linv::io::detail

#include "xz.hpp"

#include <fmt/format.h>
#include <lzma.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>

namespace kacct::cli {

std::string decompress_xz(const std::string& in, const std::string& name) {
  lzma_stream s = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
    throw std::runtime_error(name + ": cannot start the xz decoder");
  std::string out;
  char buf[1 << 16];
  s.next_in = reinterpret_cast<const std::uint8_t*>(in.data());
  s.avail_in = in.size();
  lzma_ret ret = LZMA_OK;
  while (ret == LZMA_OK) {
    s.next_out = reinterpret_cast<std::uint8_t*>(buf);
    s.avail_out = sizeof buf;
    ret = lzma_code(&s, LZMA_FINISH);
    out.append(buf, sizeof buf - s.avail_out);
  }
  lzma_end(&s);
  if (ret != LZMA_STREAM_END)
    throw std::runtime_error(fmt::format("{}: xz data is corrupt or truncated (lzma error {}) after {} bytes of output",
                                         name, int(ret), out.size()));
  return out;
}

bool is_xz(const std::string& data) {
  static constexpr char magic[] = {'\xfd', '7', 'z', 'X', 'Z', '\0'};
  return data.size() >= 6 && std::equal(magic, magic + 6, data.begin());
}

std::string read_input_maybe_xz(const std::string& path) {
  std::string data;
  if (path == "-") {
    data.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error(fmt::format("{}: cannot open", path));
    data.assign(std::istreambuf_iterator<char>(f), {});
  }
  if (is_xz(data)) return decompress_xz(data, path == "-" ? "<stdin>" : path);
  return data;
}

}  // namespace kacct::cli

// SPDX-License-Identifier: LGPL-2.1-or-later
// The stand-in for libFuzzer where it is not linked (gcc builds): runs LLVMFuzzerTestOneInput once
// on every file named, or on every file of every folder named (a corpus), in name order. A crash
// or an abort fails the program, so a corpus replayed this way is a regression test.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {
std::vector<std::filesystem::path> inputs_of(const std::filesystem::path& arg) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(arg)) return {arg};
  for (const auto& entry : std::filesystem::directory_iterator(arg))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}
}  // namespace

int main(int argc, char** argv) {
  std::size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    for (const auto& file : inputs_of(argv[i])) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::cerr << "replay: cannot read " << file << "\n";
        return 2;
      }
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++count;
    }
  }
  if (count == 0) {
    std::cerr << "replay: no input (give files or corpus folders)\n";
    return 2;
  }
  std::cout << "replay: " << count << " inputs, no crash\n";
  return 0;
}

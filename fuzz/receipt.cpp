// SPDX-License-Identifier: LGPL-2.1-or-later
// receipt.json as nerved and nervectl read it (record/record.h, parse_receipt): any text is either a
// receipt or RecordCorrupt, never another exception or a crash; a receipt it reads, written and read
// again, gives the same text.
#include "fuzz_check.h"
#include "record/record.h"

using namespace nerve;
using nerve::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text = fuzz::text_of(data, size);
  Receipt receipt;
  try {
    receipt = parse_receipt(text);
  } catch (const RecordCorrupt&) {
    return 0;
  }
  std::string written = to_json_text(receipt);
  Receipt again;
  try {
    again = parse_receipt(written);
  } catch (const RecordCorrupt& e) {
    require(false, "a receipt that was read reads again once written", written + " (" + e.what() + ")");
  }
  require(to_json_text(again) == written, "writing a receipt read back gives the same text", text);
  return 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
// lifecycle.json as nerved reads it from the runs folder (record/record.h, parse_record): any text is
// either a record or RecordCorrupt, never another exception or a crash; a record it reads is one
// nerve could have written, so writing it and reading that again gives the same text, packing it for
// memory (record/record_pack.h) loses nothing, and its deadline can be computed.
#include "fuzz_check.h"
#include "record/record.h"
#include "record/record_pack.h"

using namespace nerve;
using nerve::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text = fuzz::text_of(data, size);
  Record record;
  try {
    record = parse_record(text);
  } catch (const RecordCorrupt&) {
    return 0;
  }
  std::string written = to_json_text(record);
  Record again;
  try {
    again = parse_record(written);
  } catch (const RecordCorrupt& e) {
    require(false, "a record that was read reads again once written", written + " (" + e.what() + ")");
  }
  require(to_json_text(again) == written, "writing a record read back gives the same text", text);
  StringPool pool;
  std::string packed = pack(record, pool);
  require(to_json_text(unpack(packed, record.run, pool)) == written, "unpack(pack(record)) is the record", text);
  (void)deadline(record);
  return 0;
}

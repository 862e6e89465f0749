// SPDX-License-Identifier: LGPL-2.1-or-later
// A receipt (receipt.json, docs/dbus-api.md "receipt.json and outcomes") as nerve.h's nerve_receipt:
// every field copied out of the JSON, a figure of usage the host did not offer (null) as
// NERVE_USAGE_UNKNOWN, fields that older receipts lack as their documented default.
#pragma once

#include "libnerve/include/nerve.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace nerve::lib {

// The receipt R, whose text is TEXT; nullptr when out of memory. Throws std::exception (nlohmann::json's
// or std::invalid_argument) when R is not a receipt (not an object, a field of the wrong type).
nerve_receipt* receipt_from_json(const nlohmann::json& r, const std::string& text);

}  // namespace nerve::lib

// SPDX-License-Identifier: LGPL-2.1-or-later
// The samples of one benchmark run and their statistics, written as JSON and as a markdown table.
//
// A series is (row, side, column): side "nerve" (or "measured" where a row compares two references)
// or "reference" for comparison rows (column = the regime or the concurrency), or the size ("0", "1x",
// "10x") for growth rows (side "nerve").
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace bench {

struct Summary {
  std::size_t n = 0;
  double median = 0, p90 = 0, min = 0, max = 0, mean = 0;
};
Summary summarize(std::vector<double> v);

class Results {
 public:
  void add(const std::string& row, const std::string& side, const std::string& column, double value);
  void note(const std::string& key, nlohmann::json value);
  const std::vector<double>* find(const std::string& row, const std::string& side, const std::string& column) const;

  nlohmann::json to_json() const;
  std::string to_markdown() const;

 private:
  using Key = std::tuple<std::string, std::string, std::string>;
  mutable std::mutex mu_;
  std::map<Key, std::vector<double>> series_;
  nlohmann::json notes_ = nlohmann::json::object();
};

}  // namespace bench

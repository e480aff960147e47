// uncaught_throw.cpp: std::vector::at throws std::out_of_range from a
// lookup in an anonymous namespace called through a function object's
// operator(); nothing catches it, so std::terminate aborts. libstdc++ has no
// debug info here, so its frames print "from .../libstdc++.so.6" (-O0 -g).
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

template <typename T> class Table {
public:
  explicit Table(std::vector<T> rows) : rows_(std::move(rows)) {}
  const T &row(std::size_t i) const { return rows_.at(i); }

private:
  std::vector<T> rows_;
};

struct RowPrinter {
  const Table<int> &table;
  int operator()(std::size_t i) const { return std::printf("row %zu = %d\n", i, table.row(i)); }
};

} // namespace

int main() {
  Table<int> table({10, 20, 30});
  RowPrinter print{table};
  for (std::size_t i = 0; i <= 3; i++)
    print(i);
  return 0;
}

// smallcrash.cpp: the benchmark's small C++ crash. A lookup past the end
// of a std::vector throws std::out_of_range from libstdc++ through a
// function object; nothing catches it, so std::terminate aborts in libc:
// frames in the program (DWARF), libstdc++ (symbols only) and libc
// (libc6-dbg's compressed DWARF).
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

struct Catalog {
  std::map<std::string, std::vector<int>> shelves;
  int item(const std::string &shelf, std::size_t i) const { return shelves.at(shelf).at(i); }
};

struct Printer {
  const Catalog &catalog;
  void operator()(const std::string &shelf, std::size_t i) const {
    std::printf("%s[%zu] = %d\n", shelf.c_str(), i, catalog.item(shelf, i));
  }
};

} // namespace

int main() {
  Catalog c;
  c.shelves["books"] = {3, 1, 4};
  Printer print{c};
  for (std::size_t i = 0; i <= 3; i++)
    print("books", i);
  return 0;
}

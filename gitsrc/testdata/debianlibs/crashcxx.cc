// crashcxx: crashes inside Debian's libstdc++ (std::ostream::flush on a
// bad stream). gitsrc's TestDebianLibrariesIdentified builds it with g++.
#include <cstdint>
#include <ostream>

int main()
{
	reinterpret_cast<std::ostream *>(static_cast<uintptr_t>(16))->flush();
	return 0;
}

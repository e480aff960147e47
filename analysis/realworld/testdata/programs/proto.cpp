// proto: protobuf's Timestamp parsed from a pointer that is not mapped
// (read_stamp): the fault is inside libprotobuf.
#include <google/protobuf/timestamp.pb.h>
#include <cstdint>
__attribute__((noinline)) bool read_stamp(google::protobuf::Timestamp *ts, const void *wire, int n) {
	return ts->ParseFromArray(wire, n);
}
int main() {
	google::protobuf::Timestamp ts;
	return read_stamp(&ts, reinterpret_cast<const void *>(uintptr_t{0x7e5a1234f000}), 64) ? 0 : 1;
}

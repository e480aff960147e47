// static_dtor.cpp: a crash in a static object's destructor during exit().
// main closes the global Client's connection early and clears the member;
// ~Client, run by __run_exit_handlers, reads conn->fd through the NULL
// pointer (-O0 -g).
#include <cstdio>

struct Connection {
  int flags;
  int fd;
};

struct Client {
  Connection *conn = new Connection{0, 3};
  ~Client();
};

Client::~Client() {
  std::printf("closing fd %d\n", conn->fd);
  delete conn;
}

static Client client;

int main() {
  delete client.conn;
  client.conn = nullptr;
  std::printf("main done\n");
  return 0;
}

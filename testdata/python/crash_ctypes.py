"""A job that crashes through ctypes: string_at(0) makes libc's strlen read
address 0."""
import ctypes
import threading


def worker(stop):
    stop.wait()


def decode_header(addr):
    return ctypes.string_at(addr)  # CRASH: the call that faults


def main():
    stop = threading.Event()
    t = threading.Thread(target=worker, args=(stop,), name="watchdog")
    t.start()
    decode_header(0)


if __name__ == "__main__":
    main()

"""A job that dies of an ordinary Python exception: a worker thread's
exception first (printed by threading.excepthook), then a chained one in the
main thread."""
import json
import threading


def parse_config(text):
    return json.loads(text)


def load_config(text):
    try:
        return parse_config(text)
    except ValueError as e:
        raise RuntimeError("bad config") from e  # RAISE: the final exception


def prefetch():
    return {}["shard"]  # THREAD RAISE


if __name__ == "__main__":
    t = threading.Thread(target=prefetch, name="prefetch")
    t.start()
    t.join()
    load_config("{not json")

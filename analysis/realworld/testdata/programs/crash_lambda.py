# A crash inside a lambda called from a list comprehension at module level:
# faulthandler names the frames <lambda>, <listcomp> and <module>.
import ctypes

read_header = lambda addr: ctypes.string_at(addr, 8)
headers = [read_header(a) for a in (16,)]

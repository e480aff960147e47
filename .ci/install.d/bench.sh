# The benchmark stage (.ci/stages/bench.sh, bench/heldout.sh): gdb and
# eu-stack (elfutils) are the peers it times, GNU time measures them, g++
# and make build the small crash and bench/gen's corpus, libc6-dbg gives
# every tool glibc's DWARF, python3-torch and python3-dev make the torch
# core (installed by torch.sh too).
apt_install time gdb elfutils binutils g++ make libc6-dbg python3-torch python3-dev

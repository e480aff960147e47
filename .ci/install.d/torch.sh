# gitsrc's torch core (TestTorchCoreIdentified): Debian's python3.11 with
# python3-torch and python3-numpy, crashed in a C extension built with
# python3-dev's headers. python3-torch pulls some 185 packages (libtorch1.13,
# OpenCV, FFmpeg, Qt…; 152 MB of .debs kept in the private archive cache):
# about 6 minutes to install on a loaded 2-core machine, once; the core is
# then cached by content hash in $FAULTLINE_TEST_CACHE/gitsrc-torch.
apt_install python3-torch python3-numpy python3-dev gcc gdb

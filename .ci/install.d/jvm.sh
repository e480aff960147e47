# A JVM for the engine tests on Debian's own programs (analysis/realworld,
# TestDebianJVM): Debian's default JDK (OpenJDK 17 on bookworm) compiles
# and runs a small Java program that is crashed in the VM, in JIT-compiled
# code, and killed.
apt_install default-jdk-headless

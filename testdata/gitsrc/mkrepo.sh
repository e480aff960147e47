#!/usr/bin/env bash
# mkrepo.sh OUT builds the upstream repository the gitsrc tests serve:
#   OUT/work          a working clone with the whole history
#   OUT/srv/crashy.git  bare, uploadpack.allowReachableSHA1InWant=true
#   OUT/srv/strict.git  bare, fetch by commit hash refused (git's default)
# History (dates fixed, one day apart, so hashes are reproducible):
#   c1 initial crashy (crash.c, util.c, main.c)
#   c2 "Add record counting"                       tag v1.0 (annotated)
#   c3 "Add notes on the record format"            docs only (unrelated)
#   c4 "Rename util.c to helpers.c"                rename, content unchanged
#   c5 "Fix NULL dereference in parse_record"      changes parse_record (the crashing function)
#   c6 "Print a banner in main"                    crash.c untouched; main.c changed
#   c7 "Reword the usage comment in crash.c"       crash.c changed outside parse_record
#   c8 "Guard run_records against an empty batch"  helpers.c: run_records (a caller)
# The tests compile the crash program from a checkout of v1.0.
set -euo pipefail
out=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$out/work" "$out/srv"
mkdir -p "$out/work" "$out/srv"
cd "$out/work"
export GIT_AUTHOR_NAME=Dev GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME=Dev GIT_COMMITTER_EMAIL=dev@example.com
day=0
commit() {
  day=$((day + 1))
  export GIT_AUTHOR_DATE="2024-03-$(printf %02d $day)T12:00:00Z" GIT_COMMITTER_DATE="2024-03-$(printf %02d $day)T12:00:00Z"
  git add -A
  git commit -q -m "$1"
}
git init -q -b main .
git config core.autocrlf false
mkdir -p src/crashy docs
cp "$here/crashy/crash.c" "$here/crashy/util.c" "$here/crashy/main.c" "$here/crashy/crashy.h" src/crashy/
printf 'crashy: a program that crashes\n' >README
commit "Initial crashy"
sed -i 's|^/\* counting: none \*/$|int records_seen;|' src/crashy/crash.c
commit "Add record counting"
git tag -a v1.0 -m "crashy 1.0"
printf 'Records are name=value lines.\n' >docs/format.md
commit "Add notes on the record format"
git mv src/crashy/util.c src/crashy/helpers.c
commit "Rename util.c to helpers.c"
# The fix: parse_record checks for NULL before reading.
sed -i 's|^\treturn r->value + records_seen;$|\tif (r == NULL)\n\t\treturn -1;\n\treturn r->value + records_seen;|' src/crashy/crash.c
commit "Fix NULL dereference in parse_record

A record missing from the table crashed with SIGSEGV."
sed -i 's|^\treturn run_records(argc);$|\tputs("crashy");\n\treturn run_records(argc);|' src/crashy/main.c
commit "Print a banner in main"
sed -i 's|^/\* crash.c: record parsing. \*/$|/* crash.c: parsing of name=value records. */|' src/crashy/crash.c
commit "Reword the usage comment in crash.c"
sed -i 's|^\tint total = 0;$|\tint total = 0;\n\tif (n <= 0)\n\t\treturn 0;|' src/crashy/helpers.c
commit "Guard run_records against an empty batch"
git clone -q --bare . "$out/srv/crashy.git"
git -C "$out/srv/crashy.git" config uploadpack.allowReachableSHA1InWant true
git clone -q --bare . "$out/srv/strict.git"
# A bare clone keeps "origin"-less refs; make HEAD name main on both.
for r in crashy strict; do git -C "$out/srv/$r.git" symbolic-ref HEAD refs/heads/main; done

#!/bin/sh
# bench/gen.sh N DIR: makes DIR a repository of N files, as make bench
# measures it: N/1000 top directories of 10 directories of 100 small Go
# files (100 x 10 x 100 for 100,000), one commit, and git's index
# refreshed after the racy-git second, so that git status stats every file
# and re-hashes none, as in a user's repository at rest.
#
# The commit is written with git fast-import (one pack, not N loose
# objects) and checked out with git reset --hard.
set -eu
N=$1
DIR=$2
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
mkdir -p "$DIR"
cd "$DIR"
git init -q
awk -v n="$N" 'BEGIN {
  printf "commit refs/heads/main\ncommitter bench <bench@example.com> 1700000000 +0000\ndata 5\ninit\n"
  ignore = "*.o\nbuild/\n"
  printf "M 100644 inline .gitignore\ndata %d\n%s\n", length(ignore), ignore
  for (i = 0; i < n; i++) {
    body = sprintf("package p\n\nvar V%d = %d\n", i, i)
    printf "M 100644 inline pkg%04d/sub%d/f%d.go\ndata %d\n%s\n", int(i / 1000), int(i / 100) % 10, i, length(body), body
  }
}' | git fast-import --quiet
git symbolic-ref HEAD refs/heads/main
git reset -q --hard
# Files written in the second the index was written are racily clean: git
# would re-hash them on every status until the index is written again.
# Write it again once that second is over, as any later git command does.
sleep 1.2
git update-index -q --refresh
git status --porcelain >/dev/null

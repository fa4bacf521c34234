#!/usr/bin/env bash
# The house move of issue 43 (point 1 and the folders of point 8), replayable. Run at the root of a checkout (any
# folder inside it); the mapping (old -> new) is the data at the top of house_move.py. Idempotent.
#   house_move.sh                 mv then rewrite: git mv by the mapping, then every reference to an old module or
#                                 path in every tracked text file (imports, -m, module strings, logger names, paths)
#   house_move.sh mv | rewrite    one step;  house_move.sh table: print the mapping
#   house_move.sh theirs OTHER    during `git merge OTHER`: conflicted files without hand edits take OTHER's content
#                                 of their old path (rewritten again by the next `rewrite`); the rest is listed
#   house_move.sh adopt BASE OTHER  after the merge commit: OTHER's new files that git's directory-rename guess put
#                                 at the wrong place are moved where the mapping says; Path(__file__).parents[N] of
#                                 files now at another depth shifted
# Replay on a branch that already has the move (w/move), after others merged old-layout code into main:
#   BASE=$(git merge-base HEAD main); git merge main; house_move.sh theirs main; (resolve the listed files by hand,
#   git add, git rm what main deleted); git commit --no-edit; house_move.sh adopt $BASE main; house_move.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(git rev-parse --show-toplevel)"
python3 "$HERE/house_move.py" "$@"

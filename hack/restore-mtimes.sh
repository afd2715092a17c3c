#!/usr/bin/env bash
# restore-mtimes.sh sets each tracked file's modification time to the time
# of the last commit that changed it. go test's result cache keys a test
# on the size and modification time of every file it read: in a fresh
# clone every file is new, so without this each test that reads a
# manifest, a doc or testdata would run again though nothing it reads
# changed. Files with uncommitted changes keep their times.
#
# Usage: hack/restore-mtimes.sh (in the repository)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

declare -A dirty=()
while IFS= read -r -d '' f; do
	dirty[$f]=1
done < <(git diff --name-only -z HEAD)

# git log lists the newest commits first: the first time of a file is
# the time of the last commit that changed it. One touch per commit.
declare -A seen=() files=()
when=
while IFS= read -r line; do
	if [[ $line == @* ]]; then
		when=${line#@}
	elif [[ -n $line && -z ${seen[$line]:-} ]]; then
		seen[$line]=1
		if [[ -z ${dirty[$line]:-} && -f $line && ! -L $line ]]; then
			files[$when]+="$line"$'\n'
		fi
	fi
done < <(git -c core.quotepath=off log --format=@%ct --name-only --no-renames HEAD)
for when in "${!files[@]}"; do
	mapfile -t list <<<"${files[$when]%$'\n'}"
	touch -m -d "@$when" -- "${list[@]}"
done

# Directories: the time of their newest entry, deepest first, so that a
# test listing a directory keys on a time that changes only with what is
# in it.
find . -path ./.git -prune -o -mindepth 1 -printf '%d %T@ %y %p\0' |
	sort -z -rn |
	awk -v RS='\0' '
		{
			depth = $1; t = int($2); type = $3
			path = substr($0, index($0, $4))
			if (type == "d") {
				if (path in newest) t = newest[path]; else t = 0
				if (t > 0) print t "\t" path
			}
			parent = path; sub(/\/[^\/]*$/, "", parent)
			if (t > newest[parent]) newest[parent] = t
		}' |
	while IFS=$'\t' read -r when dir; do
		touch -m -d "@$when" -- "$dir"
	done

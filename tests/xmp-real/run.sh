#!/bin/sh
# tests/xmp-real/run.sh CLI REAL_LIB PHOTOS OUT — XMP regions on real photographs
#
# Copies REAL_LIB (a library of real photos with detected boxes, e.g. one
# `likeness-cli import photos` made, whose photos[].source_path point into PHOTOS) into
# OUT/lib with the photos inside, adds stored-turned copies of three photos
# with EXIF orientation 3, 6 and 8 (prepare.py), names every person by the
# majority label of its faces (after `calibrate --from labels`), runs
# `export --xmp`, checks every region against the library's boxes (check.py)
# and draws what ExifTool reads back (draw.py: OUT/out/*-immich.png on the
# photo as shown, *-stored.png MP rectangles on the photo as stored). Not a
# CI test: the photos are not in the repository. Needs exiftool, convert.
set -eu
cli=$1 real=$2 photos=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out/lib" "$out/out"
mkdir -p "$out"
cp -r "$real" "$out/lib"
cp -r "$photos" "$out/lib/photos"
cd "$out"
python3 "$here/prepare.py" lib
"$cli" calibrate lib --from labels >/dev/null
"$cli" people lib --json 2>/dev/null > people.json
python3 - "$cli" <<'PY'
import collections, json, subprocess, sys
d = json.load(open('lib/library.json'))
for p in json.load(open('people.json'))['people']:
    label = collections.Counter(d['faces'][f]['label'] for f in p['faces']).most_common(1)[0][0]
    subprocess.run([sys.argv[1], 'review', 'lib', 'name', p['id'], label], check=True,
                   capture_output=True)
PY
"$cli" export lib --xmp
"$cli" export lib --xmp
python3 "$here/check.py" lib
python3 "$here/draw.py" $(find lib/photos -name '*.jpg.xmp' | sed 's/\.xmp$//' | sort)

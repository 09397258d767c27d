#!/usr/bin/env python3
"""Write ground-truth labels into a library imported from photos.

  tests/photos/apply-labels.py LIBRARY LABELS.tsv

LABELS.tsv has one line per face a person can see: the photo (relative to the
folder that was imported, as photos[].source_id), the centre of the face's
box in the photo's pixels, and the identity assigned by looking at it. Each
face of the library gets faces[].label of the line whose centre is nearest
its own box's centre, when that centre lies inside the box; a face no line
matches gets none (a false detection), and a line no face matches is a face
the detector missed. Both are counted on stdout: detection precision and
recall against the labels.
"""
import json
import sys

lib, labels_path = sys.argv[1], sys.argv[2]
manifest = f"{lib}/library.json"
with open(manifest, encoding="utf-8") as f:
    d = json.load(f)
labels = {}
for line in open(labels_path, encoding="utf-8"):
    if line.startswith("#") or not line.strip():
        continue
    photo, x, y, label = line.rstrip("\n").split("\t")
    labels.setdefault(photo, []).append([float(x), float(y), label, False])
photos = {p["id"]: p.get("source_id") for p in d.get("photos", [])}
matched = unmatched = 0
for face in d["faces"]:
    face.pop("label", None)
    x, y, w, h = face["box"]
    cx, cy = x + w / 2, y + h / 2
    best = None
    for entry in labels.get(photos.get(face["photo"]), []):
        if entry[3] or not (x <= entry[0] <= x + w and y <= entry[1] <= y + h):
            continue
        dist = (entry[0] - cx) ** 2 + (entry[1] - cy) ** 2
        if best is None or dist < best[0]:
            best = (dist, entry)
    if best is None:
        unmatched += 1
        continue
    best[1][3] = True
    face["label"] = best[1][2]
    matched += 1
missed = sum(1 for entries in labels.values() for e in entries if not e[3])
total = sum(len(v) for v in labels.values())
with open(manifest, "w", encoding="utf-8") as f:
    json.dump(d, f, indent=2, ensure_ascii=False)
    f.write("\n")
print(f"faces={len(d['faces'])} labelled={matched} unlabelled={unmatched} "
      f"labels={total} missed={missed}")
print(f"precision={matched / max(len(d['faces']), 1):.4f} recall={matched / max(total, 1):.4f}")

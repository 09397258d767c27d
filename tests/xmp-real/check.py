#!/usr/bin/env python3
"""check.py LIB — every region ExifTool reads back from LIB's sidecars, placed
as Immich places it (orientRegionInfo + applyTaggedFaces, re-implemented from
server/src/services/metadata.service.ts), against the library's box of that
photo nearest to it: prints the regions checked and the worst corner
distance in the library's pixels. Exit 1 above 1 pixel (Immich floors)."""
import json, math, subprocess, sys

lib = sys.argv[1]
d = json.load(open(f'{lib}/library.json'))
worst = 0.0
n = 0
for p in d['photos']:
    # A library made from a photo folder keeps the photos there
    # (photo_folders + original, LIBRARY-FORMAT.md); others inside the library.
    if 'path' in p:
        ph = f"{lib}/{p['path']}"
    elif 'original' in p:
        ph = f"{d['photo_folders'][p.get('folder', 0)]}/{p['original']}"
    else:
        continue
    r = subprocess.run(['exiftool', '-j', '-struct', '-n', '-RegionInfo', ph + '.xmp'],
                       capture_output=True, text=True)
    if r.returncode != 0:
        continue
    j = json.loads(r.stdout)[0]
    if 'RegionInfo' not in j:
        continue
    o = json.loads(subprocess.run(['exiftool', '-j', '-n', '-Orientation', ph],
                                  capture_output=True, text=True).stdout)[0].get('Orientation', 1)
    side = o in (5, 6, 7, 8)
    ri = j['RegionInfo']
    DW, DH = ri['AppliedToDimensions']['W'], ri['AppliedToDimensions']['H']
    if side:
        DW, DH = DH, DW
    boxes = [f['box'] for f in d['faces'] if f['photo'] == p['id'] and 'box' in f]
    sx, sy = DW / p['width'], DH / p['height']
    for reg in ri['RegionList']:
        X, Y, W, H = (reg['Area'][k] for k in 'XYWH')
        if o == 3:
            X, Y = 1 - X, 1 - Y
        elif o == 6:
            X, Y = 1 - Y, X
        elif o == 8:
            X, Y = Y, 1 - X
        if side:
            W, H = H, W
        c = [math.floor((X - W / 2) * DW), math.floor((Y - H / 2) * DH),
             math.floor((X + W / 2) * DW), math.floor((Y + H / 2) * DH)]
        best = min(max(abs(c[0] - b[0] * sx), abs(c[1] - b[1] * sy),
                       abs(c[2] - (b[0] + b[2]) * sx), abs(c[3] - (b[1] + b[3]) * sy))
                   for b in boxes)
        worst = max(worst, best)
        n += 1
print(f'{n} regions; worst corner distance from the library box: {worst:.3f} px')
sys.exit(0 if n > 0 and worst <= 1.0 + 1e-6 else 1)

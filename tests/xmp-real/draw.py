#!/usr/bin/env python3
"""Draws what ExifTool reads back from each sidecar, placed as Immich places it
(orientRegionInfo + applyTaggedFaces, re-implemented from its source), on the
photo as shown (convert -auto-orient); and MP:RegionInfo as digiKam reads it
(no turn) on the photo as stored. Output: out/NAME-immich.png, out/NAME-stored.png"""
import json, subprocess, sys, os
photos = sys.argv[1:]
os.makedirs('out', exist_ok=True)
for ph in photos:
    j = json.loads(subprocess.run(['exiftool', '-j', '-struct', '-n', '-RegionInfo', '-RegionInfoMP',
                                   ph + '.xmp'], capture_output=True, text=True, check=True).stdout)[0]
    o = json.loads(subprocess.run(['exiftool', '-j', '-n', '-Orientation', ph],
                                  capture_output=True, text=True).stdout)[0].get('Orientation', 1)
    ri = j['RegionInfo']; DW = ri['AppliedToDimensions']['W']; DH = ri['AppliedToDimensions']['H']
    side = o in (5, 6, 7, 8)
    if side: DW, DH = DH, DW
    draw = []
    for r in ri['RegionList']:
        X, Y, W, H = (r['Area'][k] for k in 'XYWH')
        if o == 3: X, Y = 1 - X, 1 - Y
        elif o == 6: X, Y = 1 - Y, X
        elif o == 8: X, Y = Y, 1 - X
        if side: W, H = H, W
        x1, y1, x2, y2 = (int((X - W/2)*DW), int((Y - H/2)*DH), int((X + W/2)*DW), int((Y + H/2)*DH))
        draw += ['-stroke', 'lime', '-fill', 'none', '-draw', f'rectangle {x1},{y1} {x2},{y2}',
                 '-stroke', 'none', '-fill', 'yellow', '-draw', f"text {x1},{max(y1-3,10)} '{r['Name'][:18]}'"]
    base = os.path.basename(ph).replace('.jpg', '')
    subprocess.run(['convert', ph, '-auto-orient', '-font', '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', '-pointsize', '11', '-strokewidth', '2'] + draw
                   + [f'out/{base}-immich.png'], check=True)
    # digiKam: MP rectangles, top-left x, y, w, h, on the stored image
    sw, sh = ri['AppliedToDimensions']['W'], ri['AppliedToDimensions']['H']
    draw = []
    for r in j['RegionInfoMP']['Regions']:
        x, y, w, h = (float(v) for v in r['Rectangle'].split(','))
        draw += ['-stroke', 'red', '-fill', 'none', '-draw',
                 f'rectangle {int(x*sw)},{int(y*sh)} {int((x+w)*sw)},{int((y+h)*sh)}']
    subprocess.run(['convert', ph, '-strokewidth', '2'] + draw + [f'out/{base}-stored.png'], check=True)
    print(base, 'orientation', o, len(ri['RegionList']), 'regions')

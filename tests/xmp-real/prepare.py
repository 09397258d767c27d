#!/usr/bin/env python3
"""Real-photo check of XMP regions: the dlib library copied with its photos
inside, plus stored-turned copies of three photos carrying EXIF orientation
3, 6 and 8 (the library's boxes stay in the photo as shown)."""
import json, subprocess, struct, sys, os
lib = sys.argv[1]
d = json.load(open(f'{lib}/library.json'))
for p in d['photos']:
    p['path'] = 'photos/' + p['source_id']
emb = open(f'{lib}/embeddings.f32', 'rb').read()
dim = d['embeddings']['dim']
rows = [emb[i*dim*4:(i+1)*dim*4] for i in range(d['embeddings']['count'])]
# photos to turn: a group photo, the collage, a portrait
pick = ['faces/2008_001009.jpg', 'faces/bald_guys.jpg', 'faces/2007_007763.jpg']
turns = {3: '180', 6: '-90', 8: '90'}
next_id = max(p['id'] for p in d['photos']) + 1
new_faces = []
for src in pick:
    ph = next(p for p in d['photos'] if p['source_id'] == src)
    for o, deg in turns.items():
        name = src.replace('.jpg', f'-o{o}.jpg')
        out = f'{lib}/photos/{name}'
        subprocess.run(['convert', f'{lib}/photos/{src}', '-rotate', deg, out], check=True)
        subprocess.run(['exiftool', '-q', '-overwrite_original', f'-Orientation#={o}', out], check=True)
        d['photos'].append({'id': next_id, 'path': 'photos/' + name, 'source_id': name,
                            'width': ph['width'], 'height': ph['height']})
        for i, f in enumerate(d['faces']):
            if f['photo'] == ph['id']:
                g = dict(f); g['photo'] = next_id; g['id'] = f['id'] + f'-o{o}'
                new_faces.append(g); rows.append(rows[i])
        next_id += 1
d['faces'] += new_faces
d['embeddings']['count'] = len(d['faces'])
open(f'{lib}/embeddings.f32', 'wb').write(b''.join(rows))
json.dump(d, open(f'{lib}/library.json', 'w'), indent=1)
print(len(d['photos']), 'photos', len(d['faces']), 'faces')

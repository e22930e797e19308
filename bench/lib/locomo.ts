/**
 * The real conversational set of bench/retrieval-quality.ts: LoCoMo's dev conversations, read from
 * `../shared/data/locomo-dev.json` (relative to the repository) when that file is present. Its
 * license allows evaluation only: nothing of it is copied into the repository, only aggregate figures.
 *
 * Every dialog turn becomes a turn `"<speaker>: <text>"` of one namespace per conversation, dated by
 * its session; questions of categories 1-4 are asked with their evidence turn ids (README there).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Turn } from './retrieval-corpus.js';

/** Where the file is looked for: `SVC_BENCH_LOCOMO` when set (a checkout elsewhere), else beside the repository. */
export const LOCOMO_PATH =
  process.env.SVC_BENCH_LOCOMO ??
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'data', 'locomo-dev.json');

export const LOCOMO_CATEGORIES = ['category 1', 'category 2', 'category 3', 'category 4'] as const;

/** A question of the real set, with the conversation it belongs to. */
export interface RealQuestion {
  readonly namespace: string;
  readonly conversation: string;
  readonly text: string;
  /** `category 1` to `category 4`. */
  readonly kind: string;
  readonly evidence: readonly string[];
}

/** The real set: turns in dialog order, per conversation, and the questions of categories 1-4. */
export interface RealSet {
  readonly conversations: readonly string[];
  readonly turns: readonly Turn[];
  readonly questions: readonly RealQuestion[];
}

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
}

interface RawSample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: { question: string; evidence?: string[]; category?: number }[];
}

/** Reads the set, or returns undefined when the file is absent. */
export function loadLocomo(file = LOCOMO_PATH): RealSet | undefined {
  if (!fs.existsSync(file)) return undefined;
  const samples = JSON.parse(fs.readFileSync(file, 'utf8')) as RawSample[];
  const turns: Turn[] = [];
  const questions: RealQuestion[] = [];
  for (const sample of samples) {
    const namespace = `locomo-${sample.sample_id}`;
    const sessions = Object.keys(sample.conversation)
      .map((key) => /^session_(\d+)$/.exec(key))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    for (const n of sessions) {
      const date = (sample.conversation[`session_${n}_date_time`] as string | undefined) ?? '';
      for (const turn of sample.conversation[`session_${n}`] as RawTurn[]) {
        turns.push({ id: `${namespace}/${turn.dia_id}`, namespace, content: `${turn.speaker}: ${turn.text}`, date });
      }
    }
    for (const qa of sample.qa) {
      if (qa.category === undefined || qa.category < 1 || qa.category > 4) continue;
      // A few evidence entries hold two ids in one string ("D8:6; D9:17").
      const evidence = (qa.evidence ?? []).flatMap((e) => e.split(/[;,]\s*/)).map((e) => `${namespace}/${e.trim()}`);
      if (evidence.length === 0) continue;
      questions.push({
        namespace,
        conversation: sample.sample_id,
        text: qa.question,
        kind: `category ${qa.category}`,
        evidence,
      });
    }
  }
  return { conversations: samples.map((s) => s.sample_id), turns, questions };
}

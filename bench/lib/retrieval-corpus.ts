/**
 * A deterministic conversational-memory corpus with known evidence, for bench/retrieval-quality.ts.
 *
 * Each conversation is one namespace: two people talk over several dated sessions. Most turns are
 * small talk that reuses the vocabulary of the facts (work, pets, travel, family, food, books), and
 * each person states about a dozen facts once, in one turn (the evidence), then sometimes mentions
 * the same entity again in passing. Questions are asked about the facts the way people ask them,
 * in five classes:
 * - `paraphrase`: a reworded question that shares some content words with the evidence;
 * - `entity`: about a named entity (a pet's name, a sibling, a company, a book's author);
 * - `date`: when something happened (the evidence names the month or the day);
 * - `mismatch`: the question's words differ from the evidence's (vacation for "flew to", pet for
 *   "puppy", occupation for "working as");
 * - `multi`: two evidence turns (both trips of one person).
 * Nothing here knows how any retriever ranks; the templates were written before any measurement.
 */
import { seededRandom } from './bench-args.js';
import { factsFor, pick, type Fact, type QuestionKind } from './retrieval-corpus-facts.js';

/** One written turn. */
export interface Turn {
  readonly id: string;
  readonly namespace: string;
  readonly content: string;
  /** ISO date of the session the turn belongs to. */
  readonly date: string;
}

/** One question with the ids of its evidence turns. */
export interface Question {
  readonly namespace: string;
  readonly text: string;
  readonly kind: QuestionKind;
  readonly evidence: readonly string[];
}

/** The generated corpus. */
export interface Corpus {
  readonly turns: readonly Turn[];
  readonly questions: readonly Question[];
}

const PEOPLE = [
  'Caroline',
  'Melanie',
  'Jon',
  'Gina',
  'Tomas',
  'Priya',
  'Marcus',
  'Aiko',
  'Lena',
  'Omar',
  'Rosa',
  'Felix',
  'Nadia',
  'Viktor',
  'Hana',
  'Diego',
  'Sofia',
  'Kwame',
  'Ingrid',
  'Ravi',
];
// Small talk: reuses the facts' vocabulary without stating facts.
const SMALL_TALK = [
  'How was your week? Work has been crazy for me.',
  'I love animals, maybe we will get a pet someday when we have a bigger place.',
  'The weather was terrible last weekend, so I stayed home reading a book.',
  'That sounds amazing! Tell me more about it.',
  'Did you watch the game last night? What a finish.',
  'I have been trying to cook more at home instead of ordering food.',
  'My family is visiting next month, the house is a mess.',
  'I need a vacation so badly, somewhere warm with a beach.',
  'Work at the office has been slow, lots of meetings and not much else.',
  'I went for a long run this morning, my legs are sore.',
  'Have you read anything good lately? I need a new book.',
  'We went to the park with friends and had a picnic.',
  "My neighbor's dog barked all night again, I barely slept.",
  'I am thinking about taking a class, maybe something creative.',
  'Traffic was awful today, it took me an hour to get home.',
  'Congrats, that is such great news! You deserve it.',
  'I finally cleaned out the garage this weekend.',
  'We watched a movie about a road trip across the country, it was fun.',
  'I miss traveling, the last time I flew anywhere was ages ago.',
  'My sister keeps sending me photos of her garden.',
  'Thanks for listening, it really helps to talk about it.',
  'Are you still going to that new gym? I keep meaning to sign up.',
  'I made soup for dinner, nothing fancy but it was good.',
  'The kids at the school concert were adorable.',
  'I have a job interview next week, wish me luck.',
  'Money has been tight, so we are skipping the trip this year.',
  'I started a new podcast about history, it is fascinating.',
  'We might repaint the living room, maybe a light green.',
  'I bumped into an old friend from college at the store.',
  'Yes, I agree completely. Let us plan something soon.',
];
const OPENERS = [
  '',
  '',
  'Oh, ',
  'Honestly, ',
  'Haha, ',
  'Hey! ',
  'Well, ',
  'You know, ',
  'Ugh, ',
  'So, ',
  'By the way, ',
  'Right, ',
];
const CLOSERS = [
  '',
  '',
  '',
  ' Anyway.',
  ' Ha.',
  ' What about you?',
  ' How are things with you?',
  ' Such is life.',
  ' We will see.',
  ' Talk soon!',
  ' Fingers crossed.',
  ' Oh well.',
];
const FOLLOW_UPS = [
  (e: string) => `${e} has been keeping us busy lately, honestly.`,
  (e: string) => `I was just telling a friend about ${e} yesterday.`,
  (e: string) => `Anyway, ${e} says hi!`,
  (e: string) => `Every time I think of ${e} I smile.`,
];

/** Builds `conversations` namespaces of about `turnsPerConversation` turns each, from `seed`. */
export function buildCorpus(options: { conversations: number; turnsPerConversation: number; seed: number }): Corpus {
  const rand = seededRandom(options.seed);
  const turns: Turn[] = [];
  const questions: Question[] = [];
  for (let c = 0; c < options.conversations; c++) {
    const namespace = `conv-${c + 1}`;
    const a = PEOPLE[(2 * c) % PEOPLE.length]!;
    const b = PEOPLE[(2 * c + 1) % PEOPLE.length]!;
    const facts = [...factsFor(a, rand), ...factsFor(b, rand)].sort(() => rand() - 0.5);
    const sessions = 8;
    const perSession = Math.ceil(options.turnsPerConversation / sessions);
    // Spread the facts over the conversation, each at a random slot.
    const slots = new Map<number, Fact>();
    for (const fact of facts) {
      let slot: number;
      do slot = Math.floor(rand() * options.turnsPerConversation);
      while (slots.has(slot));
      slots.set(slot, fact);
    }
    const echoes: { person: string; entity: string }[] = [];
    const evidenceIds = new Map<Fact, string>();
    let speaker = a;
    for (let i = 0; i < options.turnsPerConversation; i++) {
      const session = Math.floor(i / perSession);
      const date = new Date(Date.UTC(2023, 0, 8 + session * 14)).toISOString().slice(0, 10);
      const id = `${namespace}:${i}`;
      const fact = slots.get(i);
      let content: string;
      if (fact) {
        content = `${fact.person}: ${fact.evidence}`;
        evidenceIds.set(fact, id);
        if (fact.echo) echoes.push({ person: fact.person, entity: fact.echo });
        speaker = fact.person === a ? b : a;
      } else if (echoes.length > 0 && rand() < 0.08) {
        const echo = echoes[Math.floor(rand() * echoes.length)]!;
        content = `${echo.person}: ${pick(rand, FOLLOW_UPS)(echo.entity)}`;
        speaker = echo.person === a ? b : a;
      } else {
        const opener = pick(rand, OPENERS);
        const body = pick(rand, SMALL_TALK);
        content = `${speaker}: ${opener}${opener === '' ? body : body[0]!.toLowerCase() + body.slice(1)}${pick(rand, CLOSERS)}`;
        speaker = speaker === a ? b : a;
      }
      turns.push({ id, namespace, content, date });
    }
    for (const fact of facts) {
      for (const q of fact.questions)
        questions.push({ namespace, text: q.text, kind: q.kind, evidence: [evidenceIds.get(fact)!] });
    }
    for (const person of [a, b]) {
      const trips = facts.filter((f) => f.person === person && f.group === 'trips');
      questions.push({
        namespace,
        text: `Which cities did ${person} fly to?`,
        kind: 'multi',
        evidence: trips.map((f) => evidenceIds.get(f)!),
      });
      questions.push({
        namespace,
        text: `What places has ${person} visited on trips abroad?`,
        kind: 'multi',
        evidence: trips.map((f) => evidenceIds.get(f)!),
      });
    }
  }
  return { turns, questions };
}

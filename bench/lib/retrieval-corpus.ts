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

export const QUESTION_KINDS = ['paraphrase', 'entity', 'date', 'mismatch', 'multi'] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];

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
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const PETS = [
  { kind: 'puppy', general: 'dog' },
  { kind: 'kitten', general: 'cat' },
  { kind: 'bunny', general: 'rabbit' },
  { kind: 'parrot', general: 'bird' },
  { kind: 'hamster', general: 'rodent' },
];
const PET_NAMES = [
  'Biscuit',
  'Pepper',
  'Mochi',
  'Oreo',
  'Luna',
  'Ziggy',
  'Waffles',
  'Nugget',
  'Clover',
  'Pickles',
  'Juniper',
  'Tofu',
];
const JOBS = [
  { job: 'nurse', field: 'healthcare', place: "the children's hospital" },
  { job: 'software engineer', field: 'tech', place: 'a small startup' },
  { job: 'teacher', field: 'education', place: 'the middle school' },
  { job: 'chef', field: 'restaurant', place: 'an Italian bistro' },
  { job: 'accountant', field: 'finance', place: 'a tax firm' },
  { job: 'graphic designer', field: 'advertising', place: 'an agency downtown' },
  { job: 'paramedic', field: 'emergency services', place: 'the county ambulance service' },
  { job: 'librarian', field: 'public service', place: 'the city library' },
];
const COMPANIES = [
  'Northwind',
  'Bluefin Labs',
  'Harbor & Co',
  'Greenleaf',
  'Summit Works',
  'Brightline',
  'Oakridge',
  'Copperpot',
];
const TRIPS = [
  { city: 'Lisbon', sight: 'the old tram lines' },
  { city: 'Kyoto', sight: 'the bamboo forest' },
  { city: 'Reykjavik', sight: 'the northern lights' },
  { city: 'Marrakesh', sight: 'the spice markets' },
  { city: 'Vancouver', sight: 'Stanley Park' },
  { city: 'Prague', sight: 'the astronomical clock' },
  { city: 'Cape Town', sight: 'Table Mountain' },
  { city: 'Buenos Aires', sight: 'a tango show' },
  { city: 'Istanbul', sight: 'the Grand Bazaar' },
  { city: 'Edinburgh', sight: 'the castle' },
];
const HOBBIES = [
  { doing: 'rock climbing at the indoor gym', club: 'climbing', general: 'sport' },
  { doing: 'painting watercolor landscapes', club: 'art', general: 'creative' },
  { doing: 'playing chess online and in the park', club: 'chess', general: 'game' },
  { doing: 'learning the violin', club: 'orchestra', general: 'musical' },
  { doing: 'baking sourdough bread', club: 'baking', general: 'kitchen' },
  { doing: 'birdwatching by the lake', club: 'birding', general: 'outdoor' },
  { doing: 'doing pottery on the wheel', club: 'ceramics', general: 'craft' },
];
const SIBLINGS = [
  { rel: 'sister', general: 'sibling' },
  { rel: 'brother', general: 'sibling' },
  { rel: 'cousin', general: 'relative' },
];
const SIBLING_NAMES = ['Emma', 'Noah', 'Olivia', 'Liam', 'Ava', 'Lucas', 'Mia', 'Ethan', 'Zara', 'Theo'];
const DISHES = [
  { dish: 'a Thai green curry', general: 'spicy' },
  { dish: 'homemade ramen', general: 'noodle' },
  { dish: 'beef bourguignon', general: 'French' },
  { dish: 'a mushroom risotto', general: 'rice' },
  { dish: 'fish tacos', general: 'Mexican' },
  { dish: 'a lemon tart', general: 'dessert' },
];
const RELATIVES = ['mom', 'dad', 'grandma', 'partner', 'roommate'];
const BOOKS = [
  { title: 'The Silent Orchard', author: 'Mara Ellison', topic: 'a family farm during a drought' },
  { title: 'Glass Harbor', author: 'Tobias Renn', topic: 'a lighthouse keeper and a shipwreck' },
  { title: 'Paper Moons', author: 'Ines Calloway', topic: 'two sisters running a traveling circus' },
  { title: 'The Last Cartographer', author: 'Hugo Varga', topic: 'mapping an unknown island' },
  { title: 'Small Mercies', author: 'June Okafor', topic: 'a nurse in a mountain village' },
  { title: 'Wintering', author: 'Saul Brandt', topic: 'a year alone in the Arctic' },
];
const RACES = [
  { race: 'half marathon', general: 'running race' },
  { race: 'marathon', general: 'running race' },
  { race: '10k charity run', general: 'running race' },
  { race: 'triathlon', general: 'endurance event' },
];
const VEHICLES = [
  { thing: 'used hatchback', general: 'car', model: 'Golf' },
  { thing: 'electric scooter', general: 'ride', model: 'Ninebot' },
  { thing: 'road bike', general: 'bicycle', model: 'Trek' },
  { thing: 'camper van', general: 'vehicle', model: 'Transit' },
];
const COLORS = ['red', 'blue', 'green', 'silver', 'yellow', 'black'];
const MOVE_CITIES = ['Denver', 'Austin', 'Portland', 'Boston', 'Seattle', 'Montreal', 'Dublin', 'Melbourne'];
const MOVE_REASONS = [
  'my partner got a new job there',
  'the rent here got too expensive',
  'we want to be closer to family',
  'I was offered a transfer',
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

interface Fact {
  readonly person: string;
  readonly evidence: string;
  readonly questions: readonly { kind: QuestionKind; text: string }[];
  /** An entity mentioned again in passing later. */
  readonly echo?: string;
  readonly group?: string;
}

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

function factsFor(person: string, rand: () => number): Fact[] {
  const facts: Fact[] = [];
  const pet = pick(rand, PETS);
  const petName = pick(rand, PET_NAMES);
  facts.push({
    person,
    evidence: `We adopted a ${pet.kind} from the animal shelter and named her ${petName}!`,
    echo: petName,
    questions: [
      { kind: 'paraphrase', text: `What is the name of the ${pet.kind} ${person} adopted?` },
      { kind: 'entity', text: `Who is ${petName}?` },
      { kind: 'mismatch', text: `Which ${pet.general} did ${person} bring home from the rescue?` },
    ],
  });
  const job = pick(rand, JOBS);
  const company = pick(rand, COMPANIES);
  facts.push({
    person,
    evidence: `Big news: I just started working as a ${job.job} at ${job.place} run by ${company}.`,
    questions: [
      { kind: 'paraphrase', text: `Where did ${person} start working as a ${job.job}?` },
      { kind: 'entity', text: `What does ${person} do for ${company}?` },
      { kind: 'mismatch', text: `What is ${person}'s new occupation in ${job.field}?` },
    ],
  });
  const trips = [...TRIPS].sort(() => rand() - 0.5).slice(0, 2);
  const tripMonths = [pick(rand, MONTHS), pick(rand, MONTHS)];
  trips.forEach((trip, i) => {
    facts.push({
      person,
      evidence: `I flew to ${trip.city} in ${tripMonths[i]} and finally saw ${trip.sight}, it was unreal.`,
      group: 'trips',
      questions: [
        { kind: 'date', text: `When did ${person} travel to ${trip.city}?` },
        { kind: 'paraphrase', text: `What did ${person} see in ${trip.city}?` },
        { kind: 'mismatch', text: `Where did ${person} go on vacation to look at ${trip.sight.replace(/^the /, '')}?` },
      ],
    });
  });
  const hobby = pick(rand, HOBBIES);
  facts.push({
    person,
    evidence: `Lately I spend my weekends ${hobby.doing}, and I joined a ${hobby.club} club downtown.`,
    questions: [
      { kind: 'paraphrase', text: `What club did ${person} join downtown?` },
      { kind: 'mismatch', text: `Which ${hobby.general} pastime keeps ${person} busy on Saturdays and Sundays?` },
    ],
  });
  const sibling = pick(rand, SIBLINGS);
  const siblingName = pick(rand, SIBLING_NAMES);
  const weddingMonth = pick(rand, MONTHS);
  facts.push({
    person,
    evidence: `My ${sibling.rel} ${siblingName} is getting married in ${weddingMonth}, I am so excited.`,
    echo: siblingName,
    questions: [
      { kind: 'date', text: `When is ${person}'s ${sibling.rel} getting married?` },
      { kind: 'entity', text: `Who is ${siblingName} to ${person}?` },
      { kind: 'mismatch', text: `Whose wedding is ${person} attending this year?` },
    ],
  });
  const dish = pick(rand, DISHES);
  const relative = pick(rand, RELATIVES);
  facts.push({
    person,
    evidence: `I tried cooking ${dish.dish} for the first time and my ${relative} loved it.`,
    questions: [
      { kind: 'paraphrase', text: `What did ${person} cook for the first time?` },
      { kind: 'mismatch', text: `Which ${dish.general} meal did ${person} prepare that a relative enjoyed?` },
    ],
  });
  const book = pick(rand, BOOKS);
  facts.push({
    person,
    evidence: `I am reading ${book.title} by ${book.author}, it is about ${book.topic}.`,
    questions: [
      { kind: 'entity', text: `Which book by ${book.author} is ${person} reading?` },
      { kind: 'paraphrase', text: `What is the book ${person} is reading about?` },
      { kind: 'mismatch', text: `Which novel has ${person} been into recently?` },
    ],
  });
  const race = pick(rand, RACES);
  const raceDay = 1 + Math.floor(rand() * 28);
  const raceMonth = pick(rand, MONTHS);
  const minutes = 40 + Math.floor(rand() * 200);
  facts.push({
    person,
    evidence: `I ran my first ${race.race} on ${raceMonth} ${raceDay} and finished in ${Math.floor(minutes / 60)} hours ${minutes % 60} minutes.`,
    questions: [
      { kind: 'date', text: `When did ${person} run the ${race.race}?` },
      { kind: 'mismatch', text: `How long did it take ${person} to complete the ${race.general}?` },
    ],
  });
  const vehicle = pick(rand, VEHICLES);
  const color = pick(rand, COLORS);
  facts.push({
    person,
    evidence: `I finally bought a ${vehicle.thing}, a ${color} ${vehicle.model}.`,
    questions: [
      { kind: 'paraphrase', text: `What color is the ${vehicle.thing} ${person} bought?` },
      { kind: 'mismatch', text: `What kind of ${vehicle.general} did ${person} recently purchase?` },
    ],
  });
  const moveCity = pick(rand, MOVE_CITIES);
  const reason = pick(rand, MOVE_REASONS);
  facts.push({
    person,
    evidence: `We are moving to ${moveCity} next month because ${reason}.`,
    questions: [
      { kind: 'paraphrase', text: `Why is ${person} moving to ${moveCity}?` },
      { kind: 'mismatch', text: `Which city is ${person} relocating to?` },
    ],
  });
  return facts;
}

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

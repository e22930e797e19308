/**
 * The facts of the retrieval corpus (bench/lib/retrieval-corpus.ts): each person states about a
 * dozen facts once (the evidence turns), drawn from fixed vocabularies, with the questions people
 * would ask about each, in the corpus's question classes.
 */

/** The classes of questions asked about the facts. */
export const QUESTION_KINDS = ['paraphrase', 'entity', 'date', 'mismatch', 'multi'] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];

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

/** One fact: who states it, the evidence turn, the questions about it. */
export interface Fact {
  readonly person: string;
  readonly evidence: string;
  readonly questions: readonly { kind: QuestionKind; text: string }[];
  /** An entity mentioned again in passing later. */
  readonly echo?: string;
  readonly group?: string;
}

/** A random item of `items`. */
export function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

/** The facts `person` states, drawn with `rand`. */
export function factsFor(person: string, rand: () => number): Fact[] {
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

/**
 * Leave-one-conversation-out choice of ranking parameters (docs/adr/0225): each conversation is
 * scored with the configuration that did best on the others, so no figure depends on parameters
 * chosen with the conversation it is scored on. Pure functions over per-question recalls.
 */

/** One question's recalls under one configuration. */
export interface Recalls {
  readonly r1: number;
  readonly r5: number;
  readonly r10: number;
}

/** A question: its conversation, its category, and its recalls per configuration (same order). */
export interface Scored {
  readonly conversation: string;
  readonly kind: string;
  readonly byConfig: readonly Recalls[];
  readonly bm25: Recalls;
}

/**
 * What a choice maximizes: the mean of R@1, R@5 and R@10 over `questions`, so that the top of the
 * list counts as much as its length (R@10 alone picks rankers that trade R@1 for R@10).
 */
export function objective(questions: readonly Scored[], config: number): number {
  const sum = questions.reduce((s, q) => {
    const r = q.byConfig[config]!;
    return s + (r.r1 + r.r5 + r.r10) / 3;
  }, 0);
  return sum / Math.max(1, questions.length);
}

/** The configuration with the best objective over `questions` (the first one on ties). */
export function bestConfig(questions: readonly Scored[], configs: number): number {
  let best = 0;
  for (let c = 1; c < configs; c++) if (objective(questions, c) > objective(questions, best) + 1e-12) best = c;
  return best;
}

/** Per question, the recalls under the configuration chosen without its conversation; and the choices. */
export function leaveOneOut(
  questions: readonly Scored[],
  configs: number,
): { recalls: Recalls[]; chosen: Map<string, number> } {
  const conversations = [...new Set(questions.map((q) => q.conversation))];
  const chosen = new Map(
    conversations.map((c) => [
      c,
      bestConfig(
        questions.filter((q) => q.conversation !== c),
        configs,
      ),
    ]),
  );
  return { recalls: questions.map((q) => q.byConfig[chosen.get(q.conversation)!]!), chosen };
}

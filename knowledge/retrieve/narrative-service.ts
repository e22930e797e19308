/**
 * Narratives: a claim told with its evidence (edges in both directions and corroborating
 * sources), its contradictions (live claims with the same subject and predicate and another
 * value), and an explanation of its effective confidence including the feedback it received.
 */
import { NotFoundError } from '../../domain/errors.js';
import { DEFAULT_SOURCE_CREDIBILITY } from '../../domain/knowledge/modes.js';
import { confidenceScore, corroboration } from '../../domain/knowledge/retrieval/scoring.js';
import type { KnowledgeState } from '../core/knowledge-state.js';

/** The narrative of one claim (GraphQL shape). */
export interface Narrative {
  readonly nodeId: string;
  readonly summary: string;
  readonly claim: { text: string; confidence: number; sourceId: string | null };
  readonly evidence: { text: string; relation: string }[];
  readonly contradictions: { text: string; relation: string }[];
  readonly confidenceExplanation: string;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** Tells claims. */
export class NarrativeService {
  readonly #core: KnowledgeState;

  constructor(core: KnowledgeState) {
    this.#core = core;
  }

  /** The narrative of a node's version valid and known now. */
  narrative(tenant: string, nsName: string, nodeId: string): Narrative {
    const core = this.#core;
    const ns = core.namespace(tenant, nsName);
    const node = core.nodeIn(ns, nodeId);
    const now = core.now();
    const row = core.nodes.visible(node.id, now, now);
    if (!row) throw new NotFoundError(`node ${node.id} has no version valid now`, { code: 'node_not_visible' });
    const support = core.nodes.support(row.vid);
    const first = core.nodes.history(node.id)[0];
    const asserting = (first ? core.nodes.support(first.vid)[0] : undefined) ?? support[0] ?? null;
    const credibilities = support.map((s) => ({
      source: s,
      credibility: core.credibility(ns.id, s, DEFAULT_SOURCE_CREDIBILITY),
    }));
    const effective =
      row.retracted === 1
        ? 0
        : r3(
            confidenceScore(
              row.confidence,
              credibilities.map((c) => c.credibility),
            ),
          );
    const evidence: { text: string; relation: string }[] = [];
    for (const edge of core.edges.touching(node.id, now)) {
      const otherId = edge.from_id === node.id ? edge.to_id : edge.from_id;
      const other = core.nodes.visible(otherId, now, now);
      if (!other || other.retracted === 1) continue;
      evidence.push({
        text: other.content,
        relation: edge.from_id === node.id ? edge.type : `${edge.type} (incoming)`,
      });
    }
    for (const c of credibilities) {
      if (c.source !== asserting)
        evidence.push({ text: `source ${c.source} (credibility ${r3(c.credibility)})`, relation: 'corroborated_by' });
    }
    const contradictions =
      row.claim_key === null
        ? []
        : core.nodes
            .byClaim(ns.id, row.claim_key, now)
            .filter((v) => v.node_id !== node.id && v.claim_value !== row.claim_value)
            .map((v) => ({ text: v.content, relation: 'contradicts' }));
    const counters = core.feedback.counters(node.id);
    const feedbackText = counters
      ? `feedback: ${counters.validations} validation(s), ${counters.refutations} refutation(s), ${counters.stale} stale mark(s), ${counters.useful} useful mark(s); last ${counters.last_action}`
      : 'no feedback yet';
    const explanation =
      row.retracted === 1
        ? `retracted: every supporting source was withdrawn, so the effective confidence is 0; ${feedbackText}`
        : `effective confidence ${effective} = node confidence ${r3(row.confidence)} x source corroboration ${r3(corroboration(credibilities.map((c) => c.credibility)))} (noisy-OR of ${credibilities.map((c) => `${c.source} ${r3(c.credibility)}`).join(', ') || 'no sources'}); ${feedbackText}`;
    const summary = `"${row.content.length > 160 ? `${row.content.slice(0, 157)}...` : row.content}" asserted by ${asserting ?? 'an unknown source'} with effective confidence ${effective}; ${evidence.length} evidence item(s), ${contradictions.length} contradiction(s)`;
    return {
      nodeId: node.id,
      summary,
      claim: { text: row.content, confidence: effective, sourceId: asserting },
      evidence,
      contradictions,
      confidenceExplanation: explanation,
    };
  }
}

/** REST (snake_case) form of a narrative. */
export function narrativeRest(n: Narrative) {
  return {
    node_id: n.nodeId,
    summary: n.summary,
    claim: { text: n.claim.text, confidence: n.claim.confidence, source_id: n.claim.sourceId },
    evidence: n.evidence,
    contradictions: n.contradictions,
    confidence_explanation: n.confidenceExplanation,
  };
}

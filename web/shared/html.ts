/**
 * `html` tagged templates bound to preact (htm): components without a JSX build step, and without
 * eval or inline script, so the pages keep a strict Content-Security-Policy.
 */
import { h, type VNode } from 'preact';
import htm from 'htm';

/** Builds preact elements from a tagged template. */
export const html = htm.bind(h) as (strings: TemplateStringsArray, ...values: unknown[]) => VNode | VNode[];

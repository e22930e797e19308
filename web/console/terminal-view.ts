/**
 * The xterm.js part of the console terminal, loaded only when a terminal is opened (its own chunk,
 * so the console's first load stays small). Its style sheets are in the main bundle (terminal.ts):
 * esbuild does not load the CSS of a lazily imported chunk.
 */
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { withConstructedStyles } from './constructed-styles.js';

/** A terminal opened in `box` and fitted to it. */
export function openTerminal(box: HTMLElement): { term: Terminal; fit: FitAddon } {
  const term = new Terminal({ cursorBlink: true, fontSize: 14, convertEol: false, scrollback: 2000 });
  const fit = new FitAddon();
  box.replaceChildren();
  withConstructedStyles(() => {
    term.loadAddon(fit);
    term.open(box);
  });
  fit.fit();
  return { term, fit };
}

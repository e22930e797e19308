/**
 * xterm.js writes its per-terminal CSS (cell sizes, theme) into `<style>` elements it creates, which
 * the pages' Content-Security-Policy (`style-src 'self'`, ADR 0130) blocks. While `build` runs, a
 * `<style>` it creates is a hidden, empty element whose `textContent` goes to a constructed style
 * sheet in `document.adoptedStyleSheets` instead (constructed sheets are not inline styles, so the
 * policy stays strict); removing the element removes its sheet.
 */
export function withConstructedStyles<T>(build: () => T): T {
  const doc = globalThis.document;
  const original = doc.createElement.bind(doc);
  const create = (tag: string, options?: ElementCreationOptions): HTMLElement => {
    if (tag.toLowerCase() !== 'style') return original(tag, options);
    const holder = original('span');
    holder.hidden = true;
    const sheet = new CSSStyleSheet();
    let text = '';
    doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
    Object.defineProperty(holder, 'textContent', {
      get: () => text,
      set: (value: string | null) => {
        text = value ?? '';
        sheet.replaceSync(text);
      },
    });
    const remove = holder.remove.bind(holder);
    holder.remove = () => {
      doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => s !== sheet);
      remove();
    };
    return holder;
  };
  doc.createElement = create;
  try {
    return build();
  } finally {
    doc.createElement = original;
  }
}

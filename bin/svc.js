#!/usr/bin/env node
// Entry point of the `svc` program: the compiled CLI when built, the TypeScript sources otherwise.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(compiled)) {
  const { main } = await import(compiled.href);
  await main(process.argv);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import(new URL('../cli/main.ts', import.meta.url).href);
  await main(process.argv);
}

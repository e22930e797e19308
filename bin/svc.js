#!/usr/bin/env node
// Entry point of the `svc` program: the compiled CLI when built, the TypeScript sources otherwise
// (or when SVC_FROM_SOURCE=1, which the tests set so that a stale build is never what they test).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(compiled) && process.env.SVC_FROM_SOURCE !== '1') {
  const { main } = await import(compiled.href);
  await main(process.argv);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import(new URL('../cli/main.ts', import.meta.url).href);
  await main(process.argv);
}

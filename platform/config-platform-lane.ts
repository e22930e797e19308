/**
 * The settings of the platform self-upgrade lane (release policy, retention, drain, host agent),
 * part of {@link VARIABLES} in config.ts, which checks that every setting is declared once.
 */
import path from 'node:path';
import { ConfigError } from '../domain/errors.js';
import type { SignaturePolicy } from '../domain/platform/release-policy.js';
import { durationMs, oneOf, optional, type VariableSpec } from './config-parsers.js';
import type { SvcConfig } from './config.js';
import { loadReleasePublicKey } from './platform-lane/release-signature.js';

export const PLATFORM_LANE_VARIABLES = {
  releaseVerifyHook: {
    name: 'SVC_RELEASE_VERIFY_HOOK',
    description:
      'Verify hook of platform releases: a command (/bin/sh -c, in the release folder) that must exit 0 before a release is promoted; SVC_RELEASE_VERIFY_COMMAND is its deprecated name, still read when this is unset',
    defaultText: '(none)',
    parse: (raw, env) => optional(raw) ?? optional(env.SVC_RELEASE_VERIFY_COMMAND),
  },
  releaseSignaturePolicy: {
    name: 'SVC_RELEASE_SIGNATURE_POLICY',
    description:
      'none or require-signed: with require-signed a platform release is promoted only when the verify hook accepted it or its artifact carries a valid signature by SVC_RELEASE_PUBLIC_KEY',
    defaultText: 'require-signed when SVC_PROFILE=production, else none',
    parse: (raw, env) =>
      oneOf<SignaturePolicy>(
        'SVC_RELEASE_SIGNATURE_POLICY',
        ['none', 'require-signed'],
        optional(env.SVC_PROFILE) === 'production' ? 'require-signed' : 'none',
      )(raw),
  },
  releasePublicKey: {
    name: 'SVC_RELEASE_PUBLIC_KEY',
    description:
      'Public key (PEM text, or the path of a PEM file) checking <archive>.sig of platform release artifacts: Ed25519, Ed448, RSA, RSA-PSS or ECDSA with SHA-256; shown by fingerprint only',
    defaultText: '(none)',
    parse: (raw) => {
      const value = optional(raw);
      if (value === undefined) return undefined;
      try {
        return loadReleasePublicKey(value);
      } catch (error) {
        throw new ConfigError('SVC_RELEASE_PUBLIC_KEY', (error as Error).message);
      }
    },
  },
  releaseFetchHook: {
    name: 'SVC_RELEASE_FETCH_HOOK',
    description:
      'Command (/bin/sh -c) that fetches the release artifact of a tag platform-<sha> into SVC_RELEASE_FETCH_DIR, for svc platform upgrade platform-<sha>',
    defaultText: '(none: fetch by tag off)',
    parse: optional,
  },
  releaseRepository: {
    name: 'SVC_RELEASE_REPOSITORY',
    description: 'Release repository the fetch hook reads (passed to it as SVC_RELEASE_REPOSITORY)',
    defaultText: '(none)',
    parse: optional,
  },
  releaseKeep: {
    name: 'SVC_RELEASE_KEEP',
    description:
      'Platform releases kept on disk after an upgrade ends (current and previous included); older ones are removed',
    defaultText: '3',
    parse: (raw) => {
      const value = optional(raw) ?? '3';
      if (!/^\d+$/.test(value) || Number(value) < 2 || Number(value) > 100)
        throw new ConfigError(
          'SVC_RELEASE_KEEP',
          `"${value}" is not a whole number in 2-100 (the current release and the one before it are always kept)`,
        );
      return Number(value);
    },
  },
  drainTimeoutMs: {
    name: 'SVC_DRAIN_TIMEOUT',
    description: 'How long the upgrade drain gate waits in wait mode',
    defaultText: '10m',
    parse: durationMs('SVC_DRAIN_TIMEOUT', 600_000),
  },
  upgradeBootTimeoutMs: {
    name: 'SVC_UPGRADE_BOOT_TIMEOUT',
    description: 'How long a candidate or restarted API may take to be healthy on its release',
    defaultText: '60s',
    parse: durationMs('SVC_UPGRADE_BOOT_TIMEOUT', 60_000),
  },
  agentMode: {
    name: 'SVC_AGENT',
    description:
      'auto: svc serve starts the host agent when platform lane work is queued; off: never (run svc agent yourself)',
    defaultText: 'auto',
    parse: oneOf('SVC_AGENT', ['auto', 'off'] as const, 'auto'),
  },
  platformRepo: {
    name: 'SVC_PLATFORM_REPO',
    description: 'Repository whose refs git:<ref> platform release sources build',
    defaultText: '(the running package folder)',
    parse: (raw) => {
      const value = optional(raw);
      return value === undefined ? undefined : path.resolve(value);
    },
  },
  agentRestartCommand: {
    name: 'SVC_AGENT_RESTART_COMMAND',
    description:
      'Command the host agent runs to restart the API (service units), instead of stopping and starting the process',
    defaultText: '(none)',
    parse: optional,
  },
  agentRestartMode: {
    name: 'SVC_AGENT_RESTART_MODE',
    description:
      "spawn: the host agent stops the API and starts it from current; stop: it only stops it and the API's supervisor (the installed unit) starts current/svc serve again",
    defaultText: 'spawn',
    parse: oneOf('SVC_AGENT_RESTART_MODE', ['spawn', 'stop'] as const, 'spawn'),
  },
} satisfies Partial<{ [K in keyof SvcConfig]: VariableSpec<SvcConfig[K]> }>;

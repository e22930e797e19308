/**
 * Validation of the committed specs under the apps folder, and of a spec sent by a caller.
 * The API (`GET /api/validate`, `POST /api/v1/validate/infraspec`) and `svc validate` call this.
 */
import path from 'node:path';
import { validateInfraspec, validateDeployGroup, type Finding, type SchedulerDriver } from '../../domain/spec/index.js';
import { discoverSpecFiles, readSpecText, type SpecFileKind } from '../../platform/spec-files.js';

/** Validation result of one file. */
export interface FileValidation {
  readonly kind: SpecFileKind;
  readonly key: string;
  /** Path relative to the apps folder. */
  readonly file: string;
  readonly valid: boolean;
  readonly findings: readonly Finding[];
}

/** Validation result of every spec under the apps folder. */
export interface AppsValidation {
  readonly valid: boolean;
  readonly files: readonly FileValidation[];
  readonly counts: {
    readonly files: number;
    readonly invalid: number;
    readonly errors: number;
    readonly warnings: number;
  };
}

/** Validates one spec file (an app spec or, under deploy-groups/, a deploy group). */
export function validateSpecFile(
  file: string,
  kind: SpecFileKind,
  options: { displayName?: string; fleetDocument?: unknown; driver?: SchedulerDriver; kafkaLagSource?: boolean } = {},
): { valid: boolean; findings: readonly Finding[] } {
  const fileName = options.displayName ?? file;
  let text: string;
  try {
    text = readSpecText(file);
  } catch (error) {
    const finding: Finding = {
      path: '',
      rule: 'file.unreadable',
      message: `${fileName}: ${(error as Error).message}`,
      line: null,
      column: null,
      severity: 'error',
    };
    return { valid: false, findings: [finding] };
  }
  if (kind === 'deploy-group') return validateDeployGroup(text, { fileName });
  return validateInfraspec(text, {
    fileName,
    ...(options.driver === undefined ? {} : { driver: options.driver }),
    ...(options.fleetDocument === undefined ? {} : { fleetDocument: options.fleetDocument }),
    ...(options.kafkaLagSource === undefined ? {} : { kafkaLagSource: options.kafkaLagSource }),
  });
}

/** Validates every spec file under `appsDir`. */
export function validateAppsDir(
  appsDir: string,
  options: { fleetDocument?: unknown; driver?: SchedulerDriver; kafkaLagSource?: boolean } = {},
): AppsValidation {
  const files = discoverSpecFiles(appsDir).map((spec): FileValidation => {
    const rel = path.relative(appsDir, spec.file);
    const result = validateSpecFile(spec.file, spec.kind, { displayName: rel, ...options });
    return { kind: spec.kind, key: spec.key, file: rel, valid: result.valid, findings: result.findings };
  });
  const all = files.flatMap((f) => f.findings);
  return {
    valid: files.every((f) => f.valid),
    files,
    counts: {
      files: files.length,
      invalid: files.filter((f) => !f.valid).length,
      errors: all.filter((f) => f.severity === 'error').length,
      warnings: all.filter((f) => f.severity === 'warning').length,
    },
  };
}
